import Foundation
import PosternCrypto
import Synchronization

/// What one provider request came to: how many recipients were suppressed and how many events
/// or recipients were ignored (a soft bounce, a delivery, an address that does not parse).
public struct DeliveryEventResult: Sendable, Hashable {
    /// Recipients suppressed.
    public let suppressed: Int
    /// Events or recipients that suppressed nothing.
    public let ignored: Int

    /// A result of `suppressed` and `ignored`.
    public init(suppressed: Int, ignored: Int) {
        self.suppressed = suppressed
        self.ignored = ignored
    }
}

/// Delivery events taken in, by provider and outcome, for `/metrics`
/// (`postern_delivery_events_total{provider=…,outcome=…}`): recipients suppressed and ignored,
/// requests refused (wrong signature, credentials, topic, certificate URL; a replay; a body that
/// is not the provider's).
public final class DeliveryEventMetrics: Sendable {
    /// What became of a recipient, or of a request that was refused.
    public enum Outcome: String, Sendable, CaseIterable {
        /// A recipient suppressed.
        case suppressed
        /// An event or recipient that suppressed nothing.
        case ignored
        /// A request refused (401, 400).
        case refused
    }

    private let counts = Mutex<[String: Int]>([:])

    /// Creates empty counters.
    public init() {}

    func count(_ provider: DeliveryEventIntake.Provider, _ outcome: Outcome, _ n: Int = 1) {
        guard n > 0 else { return }
        counts.withLock { $0["\(provider.rawValue) \(outcome.rawValue)", default: 0] += n }
    }

    /// Every provider and outcome with its count, in declaration order.
    public func snapshot() -> [(provider: DeliveryEventIntake.Provider, outcome: Outcome, count: Int)] {
        let totals = counts.withLock { $0 }
        return DeliveryEventIntake.Provider.allCases.flatMap { provider in
            Outcome.allCases.map { (provider, $0, totals["\(provider.rawValue) \($0.rawValue)"] ?? 0) }
        }
    }
}

/// Takes in the bounce and complaint events of the providers mail is relayed through (Amazon SES
/// over SNS, Postmark, a Standard Webhooks provider such as Resend) and suppresses their
/// recipients, as Postern's own bounce intake does: the same list, the same reasons (a complaint
/// is never overwritten by a bounce). Each provider proves a request is its own by its own
/// means — SNS's signature with the certificate of an SNS host, Postmark's HTTP Basic
/// credentials, a Standard Webhooks signature — and a request that does not is refused before
/// anything is written. An address Postern never mailed is suppressed all the same: the provider
/// saw it, and will refuse it next time too.
public final class DeliveryEventIntake: Sendable {
    /// The persisters this flow's transactions use.
    typealias Writes = any OutboxWriter & ProviderIdentityWriter

    /// Who sent an event.
    public enum Provider: String, Sendable, CaseIterable {
        /// Amazon SES, through SNS.
        case ses
        /// Postmark's webhooks.
        case postmark
        /// A Standard Webhooks provider (Resend).
        case standardWebhooks = "standard-webhooks"
    }

    /// Seconds a Standard Webhooks `webhook-timestamp` may be from now, either way.
    public static let timestampTolerance: Int64 = 300
    /// Seconds an SNS notification's `Timestamp` may lie in the past: SNS gives up retrying an
    /// HTTP/S delivery after 3,600 seconds at most (a hard limit of its delivery policies), plus
    /// the Standard Webhooks tolerance for clock skew. It may lie that tolerance in the future.
    public static let snsMaximumAge: Int64 = 3_600 + timestampTolerance
    /// The most SNS signing certificates kept (one per URL; SNS rotates them rarely).
    static let cachedCertificates = 16

    let context: FlowContext
    let sources: DeliveryEventSources
    private let logger: Logger?
    private let certificates = Mutex<[String: X509Certificate]>([:])
    /// Events taken in, by provider and outcome.
    public let metrics = DeliveryEventMetrics()

    init(context: FlowContext, sources: DeliveryEventSources) {
        self.context = context
        self.sources = sources
        logger = context.logger.map { FlowContext.labelled($0, "delivery-events") }
    }

    // MARK: Amazon SES over SNS

    /// Takes in one SNS message (`POST /v1/delivery-events/ses`): checks its topic, its
    /// certificate's URL and its signature, then suppresses a notification's permanent bounces
    /// and complaints, or confirms a subscription (a GET of its `SubscribeURL`, on an SNS host).
    /// A notification is taken once: its `MessageId` goes into the replay ledger (kept until its
    /// `Timestamp` is too old to be taken), and a notification older than ``snsMaximumAge`` is
    /// refused, so a signed notification seen once cannot suppress its addresses again later (after
    /// a sign-in lifted the suppression).
    /// - Throws: `AuthError` 404 when `--ses-topic-arns` is not set; 401 for another topic, a
    ///   certificate URL off the SNS hosts, a signature that does not verify, a notification too old
    ///   or from the future, one taken before; 400 for a body that
    ///   is not an SNS message; 503 when the certificate cannot be fetched or the store fails.
    public func ses(_ body: [UInt8]) throws(AuthError) -> DeliveryEventResult {
        guard let ses = sources.ses else { throw .deliveryEventsNotConfigured("--ses-topic-arns") }
        return try counting(.ses) { () throws(AuthError) in
            let message = try SNSMessage(json: body)
            guard ses.topicARNs.contains(message.topicARN) else { throw .deliveryEventRefused("its TopicArn is not one of --ses-topic-arns") }
            guard message.digest != nil else { throw .deliveryEventRefused("its SignatureVersion is neither 1 nor 2") }
            guard ses.certificateHosts.allows(message.signingCertURL, certificate: true) else {
                throw .deliveryEventRefused("its SigningCertURL is not an https .pem URL on a host of --sns-certificate-hosts")
            }
            let certificate = try certificate(at: message.signingCertURL, ses: ses)
            guard message.isSigned(by: certificate) else { throw .deliveryEventRefused("its signature does not verify") }
            switch message.kind {
            case .notification:
                let now = context.clock.unixSeconds()
                guard let sentAt = message.sentAt, (now - Self.snsMaximumAge...now + Self.timestampTolerance).contains(sentAt) else {
                    throw .deliveryEventRefused("its Timestamp is not within the last hour (SNS retries for an hour at most)")
                }
                let once = (SHA256.hash("sns MessageId \(message.topicARN) \(message.messageID)"), sentAt + Self.snsMaximumAge)
                return try suppress(ProviderDeliveryEvent.ses(message.message), provider: .ses, once: once, replay: "its MessageId")
            case .subscriptionConfirmation:
                confirm(message, ses: ses)
                return DeliveryEventResult(suppressed: 0, ignored: 0)
            case .unsubscribeConfirmation:
                logger?.info("sns unsubscribed", ["topic": message.topicARN])
                return DeliveryEventResult(suppressed: 0, ignored: 0)
            }
        }
    }

    /// The certificate at `url`, from the cache or fetched (and kept, the cache bounded).
    private func certificate(at url: String, ses: DeliveryEventSources.SES) throws(AuthError) -> X509Certificate {
        if let cached = certificates.withLock({ $0[url] }) { return cached }
        let answer: ProviderHTTPResponse
        do { answer = try ses.http.get(url) } catch {
            throw .unavailable("the SNS signing certificate could not be fetched: \(error)")
        }
        guard answer.status == 200 else { throw .unavailable("the SNS signing certificate's host answered \(answer.status)") }
        let certificate: X509Certificate
        do { certificate = try X509Certificate(pem: answer.body) } catch {
            throw .deliveryEventRefused("its SigningCertURL does not hold an RSA certificate (\(error))")
        }
        certificates.withLock { cache in
            if cache.count >= Self.cachedCertificates, let any = cache.keys.first { cache[any] = nil }
            cache[url] = certificate
        }
        return certificate
    }

    /// Confirms a signed subscription by a GET of its `SubscribeURL`, when that is on an SNS host.
    private func confirm(_ message: SNSMessage, ses: DeliveryEventSources.SES) {
        guard let url = message.subscribeURL, ses.certificateHosts.allows(url, certificate: false) else {
            logger?.warning("sns subscription not confirmed: its SubscribeURL is not https on a host of --sns-certificate-hosts", ["topic": message.topicARN])
            return
        }
        do {
            let answer = try ses.http.get(url)
            if answer.status == 200 {
                logger?.info("sns subscription confirmed", ["topic": message.topicARN])
            } else {
                logger?.warning("sns subscription not confirmed", ["topic": message.topicARN, "status": String(answer.status)])
            }
        } catch {
            logger?.warning("sns subscription not confirmed", ["topic": message.topicARN, "error": error.description])
        }
    }

    // MARK: Postmark

    /// Takes in one event of Postmark's bounce or spam complaint webhook
    /// (`POST /v1/delivery-events/postmark`), sent with the HTTP Basic credentials of its URL.
    /// - Throws: `AuthError` 404 when `--postmark-webhook-credentials-file` is not set; 401 for
    ///   missing or wrong credentials; 400 for a body that is not JSON; 503 on store trouble.
    public func postmark(_ body: [UInt8], authorization: String?) throws(AuthError) -> DeliveryEventResult {
        guard let credentials = sources.postmark else { throw .deliveryEventsNotConfigured("--postmark-webhook-credentials-file") }
        return try counting(.postmark) { () throws(AuthError) in
            guard credentials.admits(authorization: authorization) else {
                throw .deliveryEventRefused("the HTTP Basic credentials are missing or wrong")
            }
            guard let events = ProviderDeliveryEvent.postmark(body) else { throw .invalidArgument("The body must be a Postmark webhook's JSON object.") }
            return try suppress(events, provider: .postmark)
        }
    }

    // MARK: Standard Webhooks

    /// Takes in one Standard Webhooks event (`POST /v1/delivery-events/standard-webhooks`) in
    /// Resend's form, with its `webhook-id`, `webhook-timestamp` and `webhook-signature` (or
    /// `svix-*`) headers: signed with a secret of `--delivery-webhook-secret-file`, stamped within
    /// 5 minutes of now, and an id not taken before (the replay ledger every daemon shares).
    /// - Throws: `AuthError` 404 when `--delivery-webhook-secret-file` is not set; 401 for a
    ///   missing header, a stale timestamp, a wrong signature or a replayed id; 400 for a body
    ///   that is not JSON; 503 on store trouble.
    public func standardWebhook(_ body: [UInt8], id: String?, timestamp: String?, signature: String?) throws(AuthError)
        -> DeliveryEventResult
    {
        let secrets = sources.webhookSecrets
        guard !secrets.isEmpty else { throw .deliveryEventsNotConfigured("--delivery-webhook-secret-file") }
        return try counting(.standardWebhooks) { () throws(AuthError) in
            guard let id, !id.isEmpty, id.utf8.count <= 256, let timestamp, let signature else {
                throw .deliveryEventRefused("it lacks webhook-id, webhook-timestamp or webhook-signature (or their svix- names)")
            }
            let now = context.clock.unixSeconds()
            guard let stamped = Int64(timestamp.trimmingCharacters(in: .whitespaces)),
                (now - Self.timestampTolerance...now + Self.timestampTolerance).contains(stamped)
            else { throw .deliveryEventRefused("its webhook-timestamp is not within 5 minutes of now") }
            guard let text = String(validating: body, as: UTF8.self) else { throw .invalidArgument("The body must be UTF-8 JSON.") }
            guard secrets.contains(where: { $0.signed(signature, id: id, timestamp: stamped, body: text) }) else {
                throw .deliveryEventRefused("its signature does not verify")
            }
            guard let events = ProviderDeliveryEvent.standardWebhook(body) else { throw .invalidArgument("The body must be a JSON object.") }
            return try suppress(
                events, provider: .standardWebhooks,
                once: (SHA256.hash("standard-webhooks webhook-id \(id)"), stamped + Self.timestampTolerance), replay: "its webhook-id")
        }
    }

    // MARK: Suppressing

    /// Suppresses each event's recipient for its reason in one write; `once`: first records the
    /// event's id in the replay ledger (its hash, kept until it could no longer verify), and
    /// refuses the whole request when it was recorded before (`replay` names that id in the refusal).
    private func suppress(
        _ events: [ProviderDeliveryEvent], provider: Provider, once: (hash: [UInt8], expiresAt: Int64)? = nil, replay: String = ""
    ) throws(AuthError) -> DeliveryEventResult {
        var targets: [(address: EmailAddress, stored: String)] = []
        var ignored = 0
        for event in events {
            guard let reason = event.reason, let text = event.address, let address = try? EmailAddress.parse(text) else {
                ignored += 1
                continue
            }
            targets.append((address, reason.stored(event.detail)))
        }
        let chosen = targets
        let now = context.clock.unixSeconds()
        let fresh = try context.write { (tx: Writes) -> Bool in
            if let once, try !tx.useProviderToken(hash: once.hash, expiresAt: once.expiresAt) { return false }
            for target in chosen { try tx.suppress(target.address, reason: target.stored, now: now) }
            return true
        }
        guard fresh else { throw .deliveryEventRefused("\(replay) was taken before (a replay)") }
        let result = DeliveryEventResult(suppressed: chosen.count, ignored: ignored)
        logger?.info("delivery event", ["provider": provider.rawValue, "suppressed": String(result.suppressed), "ignored": String(result.ignored)])
        return result
    }

    /// Runs `body`, counting its recipients, or the request as refused when the caller is to blame.
    private func counting(_ provider: Provider, _ body: () throws(AuthError) -> DeliveryEventResult) throws(AuthError) -> DeliveryEventResult {
        do {
            let result = try body()
            metrics.count(provider, .suppressed, result.suppressed)
            metrics.count(provider, .ignored, result.ignored)
            return result
        } catch {
            if !error.isServerFault {
                metrics.count(provider, .refused)
                logger?.info("delivery event refused", ["provider": provider.rawValue, "why": error.message])
            }
            throw error
        }
    }
}
