/// A request's life as a value: open until its code is used or it expires; a sign-in's 6-digit
/// code also dies after `maximumWrongTries` wrong tries. Every rule about `consumedAt`,
/// `expiresAt`, `wrongTries` and `sixDigitKeyID` is here, so the flows ask instead of checking
/// fields, and the rules are tested without I/O. The store's "open requests" query restates the
/// first two (consumed_at IS NULL AND expires_at > now) as the index's filter; the flows still
/// ask the life of every row it returns.
public struct ActionRequestLife: Sendable, Hashable {
    /// Where a request is in its life.
    public enum Phase: Sendable, Hashable {
        /// Its code can still be used.
        case open
        /// Its code was used (or the request was ended, as a reset ends open sign-ins).
        case used
        /// Past `expiresAt`.
        case expired
    }

    /// The request, as changed by the events so far.
    public private(set) var request: ActionRequest
    /// Wrong 6-digit tries that kill a code.
    public let maximumWrongTries: Int

    /// The life of `request`.
    public init(_ request: ActionRequest, maximumWrongTries: Int = 5) {
        self.request = request
        self.maximumWrongTries = maximumWrongTries
    }

    /// The phase at `now` (seconds since 1970).
    public func phase(now: Int64) -> Phase {
        if request.consumedAt != nil { return .used }
        return now < request.expiresAt ? .open : .expired
    }

    /// Whether the request's code can still be used at `now`.
    public func isOpen(now: Int64) -> Bool { phase(now: now) == .open }

    /// Whether its 6-digit code may still be tried: open, with a 6-digit key, under the tries.
    public func acceptsSixDigitCode(now: Int64) -> Bool {
        isOpen(now: now) && request.sixDigitKeyID != nil && request.wrongTries < maximumWrongTries
    }

    /// A wrong 6-digit code was typed for its address (it counts against every open code).
    public mutating func wrongSixDigitCode() {
        guard request.sixDigitKeyID != nil else { return }
        request.wrongTries = FlowMath.counting(request.wrongTries)
    }

    /// Its code is used at `now`; false (and nothing changes) unless it was open.
    @discardableResult
    public mutating func consume(at now: Int64) -> Bool {
        guard isOpen(now: now) else { return false }
        request.consumedAt = now
        return true
    }

    /// What picking `number` on the page does to a request awaiting approval.
    public enum Pick: Sendable, Hashable {
        /// The right number: approved; the waiting device may now take the session.
        case approved
        /// A wrong number: the wait is ended (whoever typed it did not see the asking device), the
        /// link and its 6-digit code are not: the code from the mail still signs the asking device in.
        case cancelled
        /// Nothing to approve: not an approval request, not open, or already approved.
        case refused
    }

    /// Whether the request awaits a pick on the page at `now`.
    public func awaitsApproval(now: Int64) -> Bool {
        isOpen(now: now) && request.approval != nil && request.approval?.approvedAt == nil
    }

    /// Whether the waiting device may take the session at `now`: approved and not yet taken.
    public func isApproved(now: Int64) -> Bool {
        isOpen(now: now) && request.approval?.approvedAt != nil
    }

    /// The owner picked `number` on the page at `now`.
    public mutating func pick(_ number: Int, at now: Int64) -> Pick {
        guard awaitsApproval(now: now), let approval = request.approval else { return .refused }
        guard number == approval.number else {
            // Only the approval ends: the number was a guess, and one wrong guess must not leave
            // 89 more; the mail's code stays the owner's fallback on the asking device.
            request.approval = nil
            return .cancelled
        }
        request.approval?.approvedAt = now
        return .approved
    }
}
