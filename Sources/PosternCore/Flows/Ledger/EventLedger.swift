import PosternCrypto
import Synchronization

/// Queues webhook events inside the transaction of the change that causes them: one delivery per
/// endpoint of `--webhook-urls` whose filter admits the event, and one per stored endpoint whose
/// filter does (the store picks those in the same statement, so an endpoint added a moment ago
/// by another process is seen).
public struct EventLedger: Sendable {
    let configuration: WebhookConfiguration
    /// `--notify-new-device`'s window (seconds), nil when off.
    let newDeviceWindow: Int64?
    private let storedEndpoints = StoredEndpointHint()
    /// Draw every event's id and body, never asking the store first whether a stored endpoint
    /// takes it: for a store that answers over the network (``Store/isConfinedToThisMachine``
    /// false, PostgreSQL), where that question is a round trip per event and the draw a few µs.
    /// The store's one `INSERT … SELECT` then picks the endpoints (none: no row), sent with the commit.
    let drawsEveryEvent: Bool

    public init(configuration: WebhookConfiguration, newDeviceWindow: Int64? = nil, drawsEveryEvent: Bool = false) {
        self.configuration = configuration
        self.newDeviceWindow = newDeviceWindow
        self.drawsEveryEvent = drawsEveryEvent
    }

    /// A fresh `webhook-id`: `msg_` and 16 random bytes, base64url.
    /// - Throws: `CryptoError` when the DRBG fails.
    static func newWebhookID() throws -> String { "msg_" + Base64URL.encode(try SecureRandom.bytes(16)) }

    /// Queues `event`, which happened at `now`, under a fresh `webhook-id`. A store that runs the
    /// closure again draws a new one; only the committed run's id is ever sent.
    /// An account's event is a line of its activity too (``ActivityEntry/init(event:at:origin:)``),
    /// recorded here in the same transaction: a sign-in with the request's device and network.
    /// - Throws: what the store throws.
    public func record(_ event: WebhookEvent, tx: any WebhookWriter, now: Int64) throws {
        if let entry = ActivityEntry(event: event, at: now, origin: SessionOrigin.current) {
            if entry.kind == "signIn", let window = newDeviceWindow, let origin = SessionOrigin.current {
                try noticeNewDevice(entry, origin: origin, since: now - window, tx: tx)
            }
            try tx.recordActivity(entry)
        }
        try record(try prepare(event, now: now), tx: tx)
    }

    /// `--notify-new-device`: before a sign-in from `origin` is recorded, mails the account's
    /// address a "new sign-in" notice when the account signed in within the window but never from
    /// this device and network. Not for its first sign-in (nothing to compare with), an anonymous
    /// account or one without an address. A notice, not a request: no address limit counts it.
    /// - Throws: what the store throws.
    private func noticeNewDevice(_ entry: ActivityEntry, origin: SessionOrigin, since: Int64, tx: any WebhookWriter) throws {
        // Every store's writer holds every persister; the events' own type names only theirs.
        guard let tx = tx as? any AccountReader & OutboxWriter & ActivityWriter,
            let account = try tx.account(uid: entry.uid), !account.isAnonymous, let email = account.email,
            try tx.hasSignIn(uid: entry.uid, since: since, from: nil), try !tx.hasSignIn(uid: entry.uid, since: since, from: origin)
        else { return }
        let device = [origin.deviceName, origin.network.map { "(\($0))" }].compactMap(\.self).joined(separator: " ")
        try ActionLedger.queueNotice(.newSignIn(device: device.isEmpty ? "another device" : device), to: email, tx: tx, now: entry.at)
    }

    /// An event made ready to queue: its id and body drawn and encoded before the transaction, so
    /// that a caller whose records a single writer commits (the outbox workers) does that work on
    /// its own thread. Preparing an event that is then not recorded costs nothing but the work.
    ///
    /// When no endpoint of `--webhook-urls` admits it and no stored endpoint was seen by the last
    /// record, it is prepared without them, and the transaction that records it draws them only if
    /// a stored endpoint admits it after all (one added a moment ago): the `mail.*` events of a
    /// daemon without webhooks cost no body and no random id per message (2.4% of a drain's CPU).
    public struct Prepared: Sendable {
        fileprivate let event: WebhookEvent
        fileprivate let drawn: (webhookID: String, body: String)?
        fileprivate let now: Int64
    }

    /// `event`, which happened at `now`, with a fresh `webhook-id` and its body where it may be queued.
    /// - Throws: `CryptoError` when the DRBG fails.
    public func prepare(_ event: WebhookEvent, now: Int64) throws -> Prepared {
        let needed = drawsEveryEvent || admitsConfigured(event.type) || storedEndpoints.seen.load(ordering: .relaxed)
        return Prepared(event: event, drawn: needed ? try Self.draw(event, now: now) : nil, now: now)
    }

    /// Queues a prepared event, in the transaction of the change that caused it.
    /// - Throws: what the store throws; `CryptoError` when the DRBG fails.
    public func record(_ event: Prepared, tx: any WebhookWriter) throws {
        let type = event.event.type
        let urls = admitsConfigured(type) ? configuration.endpoints : []
        let drawn: (webhookID: String, body: String)
        if let prepared = event.drawn {
            drawn = prepared
        } else {
            let stored = try tx.hasWebhookEndpoint(admitting: type)
            if stored { storedEndpoints.seen.store(true, ordering: .relaxed) }
            guard stored || !urls.isEmpty else { return }
            drawn = try Self.draw(event.event, now: event.now)
        }
        try tx.enqueueWebhook(
            webhookID: drawn.webhookID, eventType: type, body: drawn.body,
            endpoints: urls.map { WebhookTarget(url: $0) }, now: event.now,
            giveUpAt: FlowContext.adding(configuration.policy.maximumAge, to: event.now), storedFilter: true)
    }

    private func admitsConfigured(_ type: String) -> Bool {
        !configuration.endpoints.isEmpty && configuration.filter.admits(type)
    }

    private static func draw(_ event: WebhookEvent, now: Int64) throws -> (webhookID: String, body: String) {
        (try newWebhookID(), event.body(at: now))
    }
}

/// Whether a record has found a stored endpoint: from then on events are prepared with their body
/// (a hint only: the transaction decides; it stays set after the endpoints are removed, which
/// costs only the body drawn in vain).
final class StoredEndpointHint: Sendable {
    let seen = Atomic<Bool>(false)
}
