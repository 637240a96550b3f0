import Synchronization

/// What taking in a delivery report came to (`postern bounces take`, `POST /v1/admin/bounces`).
public struct BounceResult: Sendable, Hashable {
    /// What was done.
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// A permanent failure: recorded on the message, the address suppressed.
        case bounced
        /// A delay or soft failure: recorded, nothing suppressed.
        case delayed
        /// An abuse report: recorded, the address suppressed.
        case complaint
        /// Nothing matched or nothing to do: `reason` says which.
        case ignored
    }

    /// What was done.
    public let outcome: Outcome
    /// The outbox message the report is about, when matched.
    public let messageID: Int64?
    /// The status (`5.1.1`) or feedback type, when matched.
    public let status: String?
    /// Why nothing was done, for `ignored`.
    public let reason: String?

    /// Creates a result.
    public init(outcome: Outcome, messageID: Int64?, status: String?, reason: String?) {
        self.outcome = outcome
        self.messageID = messageID
        self.status = status
        self.reason = reason
    }
}

/// Reports taken in, by outcome, for `/metrics` (`postern_bounces_total{outcome=…}`).
public final class BounceMetrics: Sendable {
    private let counts = Mutex<[BounceResult.Outcome: Int]>([:])

    /// Creates empty counters.
    public init() {}

    func count(_ outcome: BounceResult.Outcome) { counts.withLock { $0[outcome, default: 0] += 1 } }

    /// Every outcome with its count, in ``BounceResult/Outcome``'s order.
    public func snapshot() -> [(outcome: BounceResult.Outcome, count: Int)] {
        let totals = counts.withLock { $0 }
        return BounceResult.Outcome.allCases.map { ($0, totals[$0] ?? 0) }
    }
}

/// Takes in delivery status notifications (RFC 3464) and abuse reports (RFC 5965): matches one to
/// the message it is about by the VERP reverse path (``BounceAddress``) — never by an address the
/// report names, which its sender chooses — and records it. A permanent failure or a complaint
/// suppresses the message's own recipient, as an SMTP 5xx does; a delay only records.
public final class BounceIntake: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any OutboxWriter & WebhookWriter
    /// What this flow's reads use.
    typealias Reads = any OutboxReader & WebhookReader

    let context: FlowContext
    /// Delivery reports taken in, by outcome.
    public let metrics = BounceMetrics()

    init(context: FlowContext) { self.context = context }

    /// The VERP reverse path for outbox message `id` to `recipient` (`--bounce-address`), or nil
    /// for `--mail-from`'s.
    public func envelopeSender(messageID id: Int64, recipient: EmailAddress) -> String? {
        context.config.bounceAddress?.envelopeSender(messageID: id, recipient: recipient, ring: context.keys.current.actionCodes)
    }

    /// Takes in the raw message `raw`. A message that is not a report is ignored with its reason,
    /// not refused: a bounce address also gets vacation replies and spam, and a feed that failed
    /// on them would make the relay send them back.
    /// - Throws: `AuthError.invalidArgument` for an empty message; `unavailable` on store trouble.
    public func take(_ raw: [UInt8]) throws(AuthError) -> BounceResult {
        guard raw.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
            throw .invalidArgument("The body must be the raw report, as mail brought it (RFC 5322).")
        }
        let result: BounceResult
        do {
            result = try match(try DeliveryReport.parse(raw))
        } catch let error as DeliveryReportError {
            result = BounceResult(outcome: .ignored, messageID: nil, status: nil, reason: error.description)
        } catch let error as AuthError {
            throw error
        } catch {
            throw .internalError("bounce intake: \(error)")
        }
        metrics.count(result.outcome)
        return result
    }

    private func match(_ report: DeliveryReport) throws(AuthError) -> BounceResult {
        func ignored(_ reason: String, _ id: Int64? = nil) -> BounceResult {
            BounceResult(outcome: .ignored, messageID: id, status: nil, reason: reason)
        }
        guard let address = context.config.bounceAddress else {
            return ignored("no --bounce-address is set, so no report can be matched to a message")
        }
        let ring = context.keys.current.actionCodes
        let candidates = report.reversePathCandidates.compactMap { address.tagged(in: $0, ring: ring) }
        guard !candidates.isEmpty else { return ignored("the report names no reverse path of ours with a tag that verifies") }
        // The tag verifies against the message's own recipient, so the message is read first.
        enum Found: Sendable { case message(Int64), gone, forged }
        let found = try context.read { (tx: Reads) -> Found in
            var gone = false
            for candidate in candidates {
                guard let message = try tx.outboxMessage(id: candidate.messageID) else {
                    gone = true
                    continue
                }
                if address.verifies(candidate, recipient: message.recipient, ring: ring) { return .message(candidate.messageID) }
            }
            return gone ? .gone : .forged
        }
        let id: Int64
        switch found {
        case .message(let matched): id = matched
        case .gone: return ignored("the message is no longer in the outbox (kept --retention-days), or the tag is not ours")
        case .forged: return ignored("the report names no reverse path of ours with a tag that verifies")
        }
        let kind: OutboxBounce.Kind
        let status: String
        let diagnostic: String
        switch report.kind {
        case .feedback:
            kind = .complaint
            status = report.feedbackType ?? "abuse"
            diagnostic = "abuse report (\(status))"
        case .deliveryStatus:
            if let failed = report.recipients.first(where: \.isPermanentFailure) {
                (kind, status, diagnostic) = (.failed, failed.status ?? "5.0.0", failed.diagnostic ?? "")
            } else if let delayed = report.recipients.first(where: \.isTransient) {
                (kind, status, diagnostic) = (.delayed, delayed.status ?? "4.0.0", delayed.diagnostic ?? "")
            } else {
                let status = report.recipients.first?.status
                return BounceResult(
                    outcome: .ignored, messageID: id, status: status, reason: "the report says the message was delivered, relayed or expanded")
            }
        }
        let now = context.clock.unixSeconds()
        let outcome: BounceResult.Outcome = switch kind {
        case .failed: .bounced
        case .delayed: .delayed
        case .complaint: .complaint
        }
        let events = context.events
        let recorded = try context.write { (tx: Writes) -> Bool in
            guard let message = try tx.outboxMessage(id: id) else { return false }
            let bounce = OutboxBounce(kind: kind, status: status, detail: Self.withoutAddress(diagnostic, message.recipient), at: now)
            guard try tx.recordBounce(id: id, bounce) else { return true }
            if kind != .delayed {
                let reason = kind == .failed ? "bounced" : "complaint"
                let suppression: SuppressionReason = kind == .failed ? .bounce : .complaint
                try tx.suppress(message.recipient, reason: suppression.stored(status), now: now)
                try events.record(
                    .mailBounced(messageID: id, kind: message.intent.name, reason: reason, status: status, email: message.recipient),
                    tx: tx, now: now)
            }
            return true
        }
        guard recorded else { return ignored("the message is no longer in the outbox (kept --retention-days)", id) }
        return BounceResult(outcome: outcome, messageID: id, status: status, reason: nil)
    }

    /// `text` with the recipient's address and local part replaced by `<recipient>`: the record
    /// keeps what went wrong, not who it went wrong for (a log line or an event may quote it).
    static func withoutAddress(_ text: String, _ recipient: EmailAddress) -> String {
        var cleaned = text
        for needle in [recipient.address, recipient.normalized, recipient.localPart] where needle.count >= 2 {
            cleaned = cleaned.replacingOccurrences(of: needle, with: "<recipient>", options: .caseInsensitive)
        }
        return cleaned
    }
}
