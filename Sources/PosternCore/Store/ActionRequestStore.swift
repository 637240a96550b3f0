/// The action requests' persister and the single-use ledger: every code a link or a mail carries
/// is a request here, and a consumed code's nonce stays in the ledger until the code expires.
public protocol ActionRequestReader {
    /// Whether the code with this nonce has been consumed.
    func isConsumed(nonce: [UInt8]) throws -> Bool
    /// The action request with `id`.
    func actionRequest(id: String) throws -> ActionRequest?
    /// The action requests with these ids that exist, by id, in one read: the content stage reads
    /// a worker's batch at once.
    func actionRequests(ids: [String]) throws -> [String: ActionRequest]
    /// Unconsumed, unexpired requests of `purpose` for `address`, newest first.
    func openActionRequests(purpose: ActionRequest.Purpose, address: EmailAddress, now: Int64) throws -> [ActionRequest]
}

/// Action request and ledger changes.
public protocol ActionRequestWriter: ActionRequestReader {
    /// Records a code as used; false when it was already (exactly one concurrent caller gets true).
    func consume(nonce: [UInt8], expiresAt: Int64) throws -> Bool
    /// Forgets at most `limit` used codes whose code expired at or before `now` (a code is refused
    /// as expired from its expiry on, so its entry is no longer needed); returns how many.
    func pruneConsumedCodes(now: Int64, limit: Int) throws -> Int

    /// Records an action request.
    func insertActionRequest(_ request: ActionRequest) throws
    /// Replaces an action request (its code state). Throws `notFound` when absent.
    func updateActionRequest(_ request: ActionRequest) throws
    /// Forgets at most `limit` requests that expired at or before `horizon`; returns how many.
    func pruneActionRequests(expiredBy horizon: Int64, limit: Int) throws -> Int
}
