import Foundation
import PosternAPI

/// What one HTTP POST of a webhook came to, as the transport saw it.
public struct WebhookResponse: Sendable, Hashable {
    /// The HTTP status (0 when there was none: no connection, a timeout).
    public let status: Int
    /// The `Retry-After` header, when it held a number of seconds.
    public let retryAfter: Int64?
    /// A short description: the status, or the local failure (never a header or the body).
    public let reply: String

    public init(status: Int, retryAfter: Int64? = nil, reply: String) {
        self.status = status
        self.retryAfter = retryAfter
        self.reply = reply
    }

    /// The delivery outcome: any 2xx is delivered, 410 Gone is for good (the endpoint is
    /// disabled), everything else — other statuses, a timeout, no connection — is tried again.
    public var outcome: DeliveryOutcome {
        switch status {
        case 200..<300: .sent(reply: reply)
        case 410: .permanent(reply: reply)
        default: .transient(reply: reply, connectionFailed: status == 0)
        }
    }

    /// `Retry-After` as a number of seconds (an HTTP date is not read: the backoff applies then).
    public static func retryAfterSeconds(_ header: String?) -> Int64? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), let seconds = Int64(text), seconds >= 0 else { return nil }
        return seconds
    }
}

/// Sends one signed webhook. Implementations classify nothing: they report what happened.
public protocol WebhookTransport {
    /// POSTs `body` (JSON) to `url` with the signed headers, within the transport's timeout.
    func post(url: String, headers: WebhookSignedHeaders, body: String) -> WebhookResponse
}

/// The webhook settings the flows and the worker share.
public struct WebhookConfiguration: Sendable {
    /// The URLs of `--webhook-urls` (stored endpoints are added by `postern webhooks add`).
    public var endpoints: [String]
    /// The events the URLs of `--webhook-urls` are sent (`--webhook-events`).
    public var filter: WebhookEventFilter
    /// The retry schedule: `baseDelay` doubling up to `maximumDelay`, abandoned after `maximumAge`.
    public var policy: DeliveryPolicy
    /// The addresses an endpoint may be at (`--allow-private-targets`): checked when one is added.
    public var targets: TargetAddressPolicy

    /// Checks an endpoint URL: absolute http:// or https://, no space or control character, at
    /// most 2,000 characters, no user or password in it (the secret signs the requests), a host
    /// name or a bracketed IPv6 address and an optional port (`WebhookEndpointRequestBody.urlPattern`).
    /// - Throws: `SettingsError` saying what is wrong.
    public static func checkURL(_ url: String) throws(SettingsError) {
        // By scalars, as the schema's pattern reads it: by characters, `https://🏻…` does not
        // start with `https://` (the skin-tone modifier joins the `/` into one character).
        let scalars = url.unicodeScalars
        guard scalars.starts(with: "http://".unicodeScalars) || scalars.starts(with: "https://".unicodeScalars),
            scalars.count <= WebhookEndpointRequestBody.urlMaximumLength, !scalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else { throw SettingsError("each URL must be an absolute http:// or https:// URL without spaces") }
        let authority = String.UnicodeScalarView(scalars.drop(while: { $0 != "/" }).dropFirst(2).prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" }))
        guard authority.count >= 2, !authority.contains("@") else {
            throw SettingsError("a webhook URL needs a host and no user or password")
        }
        // The schema's pattern states the same rule (ContractTests and WebhookAdminTests check both),
        // a valid host included: `http://[ab` is no URL, and it would be echoed and curled.
        guard let regex = Self.urlRegex, regex.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)) != nil else {
            throw SettingsError(
                "each URL must be an absolute http:// or https:// URL without spaces, its host a name without [ ] : or an IPv6 address in brackets, its port 0 to 65535")
        }
    }

    private static let urlRegex = try? NSRegularExpression(pattern: WebhookEndpointRequestBody.urlPattern)

    /// The Standard Webhooks schedule's span: first retry after 5 s, at most 10 hours apart,
    /// given up after 3 days.
    public static let standardPolicy = DeliveryPolicy(baseDelay: 5, maximumDelay: 36_000, maximumAge: 3 * 86_400, lease: 120)

    public init(
        endpoints: [String] = [], filter: WebhookEventFilter = .all, policy: DeliveryPolicy = WebhookConfiguration.standardPolicy,
        targets: TargetAddressPolicy = TargetAddressPolicy()
    ) {
        self.endpoints = endpoints
        self.filter = filter
        self.policy = policy
        self.targets = targets
    }
}
