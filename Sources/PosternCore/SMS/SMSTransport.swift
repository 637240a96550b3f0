/// One SMS as a transport sends it: the number, the text, and a reference that is the same on
/// every attempt (the generic JSON provider's `webhook-id`, an idempotency key).
public struct OutgoingSMS: Sendable, Hashable {
    public let reference: String
    public let to: PhoneNumber
    public let body: String

    public init(reference: String, to: PhoneNumber, body: String) {
        self.reference = reference
        self.to = to
        self.body = body
    }
}

/// What a provider answered to one SMS, as the transport saw it.
public struct SMSResponse: Sendable, Hashable {
    /// The HTTP status (0 when there was none: no connection, a timeout, a local failure).
    public let status: Int
    /// `Retry-After`, in seconds, when the provider sent one.
    public let retryAfter: Int64?
    /// The provider's own error code (Twilio's JSON `code`, e.g. 21211), when it gave one.
    public let providerCode: String?
    /// The provider's message id (Twilio's `sid`), when it gave one.
    public let providerID: String?
    /// A short description kept on the message: the status, the provider's id or code, or the
    /// local failure. Never the number, the text or a credential.
    public let reply: String

    public init(status: Int, retryAfter: Int64? = nil, providerCode: String? = nil, providerID: String? = nil, reply: String) {
        self.status = status
        self.retryAfter = retryAfter
        self.providerCode = providerCode
        self.providerID = providerID
        self.reply = reply
    }

    /// The delivery outcome, as mail's: any 2xx is sent; a network failure, 429 and 5xx are
    /// tried again (not before `Retry-After`); any other status (a 4xx: a bad number, a refused
    /// sender, bad credentials) is dead, the provider's code kept.
    public var outcome: DeliveryOutcome {
        switch status {
        case 200..<300: .sent(reply: reply)
        case 0: .transient(reply: reply, connectionFailed: true)
        case 429, 500..<600: .transient(reply: reply, connectionFailed: false)
        case 400..<500: .permanent(reply: reply)
        default: .transient(reply: reply, connectionFailed: false)
        }
    }
}

/// Hands one SMS to a provider. Used by one worker at a time (not `Sendable`); never throws:
/// every failure is an ``SMSResponse``.
public protocol SMSTransport: AnyObject {
    /// Sends `sms` and says what the provider answered.
    func send(_ sms: OutgoingSMS) -> SMSResponse
}

/// Makes one transport per worker.
/// - Throws: when the transport cannot be set up (the directory cannot be created, a secret file
///   cannot be read).
public typealias SMSTransportFactory = @Sendable () throws -> any SMSTransport

/// Where SMS go (`--sms-transport`): `file:DIR` (the embedded default, `file:./sms-out`),
/// `twilio:ACCOUNT_SID` (Twilio's Messages API), or `json:URL` (a signed JSON POST to any other
/// provider's gateway).
public enum SMSTransportConfig: Sendable, Hashable {
    case file(directory: String)
    case twilio(accountSID: String)
    case json(url: String)

    /// The default: files in `./sms-out`.
    public static let embeddedDefault = SMSTransportConfig.file(directory: "./sms-out")

    /// Parses the setting's value.
    /// - Throws: `SettingsError` saying what the value must look like (never echoing a secret:
    ///   the value holds none).
    public static func parse(_ text: String) throws(SettingsError) -> SMSTransportConfig {
        if text.hasPrefix("file:") {
            let directory = String(text.dropFirst(5))
            guard !directory.isEmpty else { throw SettingsError("file: needs a directory, such as file:./sms-out") }
            return .file(directory: directory)
        }
        if text.hasPrefix("twilio:") {
            let sid = String(text.dropFirst(7))
            guard sid.count == 34, sid.hasPrefix("AC"), sid.dropFirst(2).allSatisfy(\.isHexDigit) else {
                throw SettingsError("twilio: needs the account SID, AC followed by 32 hexadecimal digits")
            }
            return .twilio(accountSID: sid)
        }
        if text.hasPrefix("json:") {
            let url = String(text.dropFirst(5))
            guard url.hasPrefix("https://") || url.hasPrefix("http://"), url.count > 8, !url.contains(where: { $0.isWhitespace }) else {
                throw SettingsError("json: needs the gateway's http(s) URL, such as json:https://sms.example.com/send")
            }
            // As the HTTP mail provider's: the POSTs are signed, so the URL needs no credentials,
            // and a user:password in it would reach the start-up log line.
            guard !ProviderURL.carriesCredentials(url) else {
                throw SettingsError("json: the gateway URL must not carry credentials: the POSTs are signed with --sms-json-secret-file")
            }
            return .json(url: url)
        }
        throw SettingsError("must be file:DIR, twilio:ACCOUNT_SID or json:URL")
    }
}
