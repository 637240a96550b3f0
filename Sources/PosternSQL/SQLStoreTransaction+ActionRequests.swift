import PosternCore
import PosternCrypto

/// Action requests and the single-use ledger (``ActionRequestWriter``).
extension SQLStoreTransaction {
    // MARK: action requests

    private static let requestColumns =
        "id, purpose, email, uid, other_email, password_hash, continue_url, locale, code_challenge, created_at, expires_at, six_digit_key_id, wrong_tries, consumed_at, approval_number, approval_device, approved_at, browser_bound"

    private func readRequest(_ row: any SQLRow) throws -> ActionRequest {
        guard let id = row.text(0), let purpose = row.text(1).flatMap(ActionRequest.Purpose.init(rawValue:)),
            let email = try row.text(2).map({ try EmailAddress.parse($0) })
        else { throw StoreError.corrupt("action request row") }
        return ActionRequest(
            id: id, purpose: purpose, email: email, uid: row.text(3),
            otherEmail: try row.text(4).map { try EmailAddress.parse($0) }, passwordHash: row.text(5),
            continueURL: row.text(6), locale: row.text(7), codeChallenge: row.text(8), createdAt: row.integer(9),
            expiresAt: row.integer(10), sixDigitKeyID: row.optionalInteger(11).map { UInt32(truncatingIfNeeded: $0) },
            wrongTries: Int(row.integer(12)), consumedAt: row.optionalInteger(13), approval: try readApproval(row, from: 14),
            browserBound: row.integer(17) != 0)
    }

    /// The approval columns (number, device, approved_at), nil when unset. (`approval_choices`,
    /// the three numbers the page once offered to pick from, is no longer written or read: the
    /// owner types the number now.)
    private func readApproval(_ row: any SQLRow, from first: Int32) throws -> ActionRequest.Approval? {
        guard let number = row.optionalInteger(first) else { return nil }
        guard let device = row.text(first + 1) else { throw StoreError.corrupt("action request approval") }
        return ActionRequest.Approval(number: Int(number), device: device, approvedAt: row.optionalInteger(first + 2))
    }

    public func actionRequest(id: String) throws -> ActionRequest? {
        try db.first("SELECT \(Self.requestColumns) FROM action_requests WHERE id = ?", [.text(id)], readRequest)
    }

    public func actionRequests(ids: [String]) throws -> [String: ActionRequest] {
        var found: [String: ActionRequest] = [:]
        for keys in Self.inLists(ids) {
            try db.query("SELECT \(Self.requestColumns) FROM action_requests WHERE id IN (\(keys.placeholders))", keys.values) { row in
                let request = try readRequest(row)
                found[request.id] = request
            }
        }
        return found
    }

    public func openActionRequests(purpose: ActionRequest.Purpose, address: EmailAddress, now: Int64) throws -> [ActionRequest] {
        var out: [ActionRequest] = []
        try db.query(
            "SELECT \(Self.requestColumns) FROM action_requests WHERE normalized = ? AND purpose = ? AND consumed_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 20",
            [.text(address.normalized), .text(purpose.rawValue), .integer(now)]
        ) { out.append(try readRequest($0)) }
        return out
    }

    private func requestValues(_ r: ActionRequest) -> [SQLValue] {
        [
            .text(r.purpose.rawValue), .text(r.email.address), .text(r.email.normalized), r.uid.map(SQLValue.text) ?? .null,
            r.otherEmail.map { .text($0.address) } ?? .null, r.passwordHash.map(SQLValue.text) ?? .null,
            r.continueURL.map(SQLValue.text) ?? .null, r.locale.map(SQLValue.text) ?? .null,
            r.codeChallenge.map(SQLValue.text) ?? .null, .integer(r.createdAt), .integer(r.expiresAt),
            r.sixDigitKeyID.map { .integer(Int64($0)) } ?? .null,
            .integer(Int64(r.wrongTries)), r.consumedAt.map(SQLValue.integer) ?? .null,
            r.approval.map { .integer(Int64($0.number)) } ?? .null,
            r.approval.map { .text($0.device) } ?? .null, r.approval?.approvedAt.map(SQLValue.integer) ?? .null,
            .integer(r.browserBound ? 1 : 0), .text(r.id),
        ]
    }

    public func insertActionRequest(_ request: ActionRequest) throws {
        // Its id is random (unique in practice): nothing waits on its answer.
        try db.executeDeferred(
            "INSERT INTO action_requests (purpose, email, normalized, uid, other_email, password_hash, continue_url, locale, code_challenge, created_at, expires_at, six_digit_key_id, wrong_tries, consumed_at, approval_number, approval_device, approved_at, browser_bound, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            requestValues(request))
    }

    public func updateActionRequest(_ request: ActionRequest) throws {
        let changed = try db.execute(
            "UPDATE action_requests SET purpose = ?, email = ?, normalized = ?, uid = ?, other_email = ?, password_hash = ?, continue_url = ?, locale = ?, code_challenge = ?, created_at = ?, expires_at = ?, six_digit_key_id = ?, wrong_tries = ?, consumed_at = ?, approval_number = ?, approval_device = ?, approved_at = ?, browser_bound = ? WHERE id = ?",
            requestValues(request))
        guard changed == 1 else { throw StoreError.notFound("action request") }
    }

    public func pruneActionRequests(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "action_requests", key: "id", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }


    // MARK: the single-use ledger

    public func isConsumed(nonce: [UInt8]) throws -> Bool {
        try db.first("SELECT 1 FROM consumed_codes WHERE nonce_hash = ?", [.blob(SHA256.hash(nonce))]) { _ in true } ?? false
    }

    public func consume(nonce: [UInt8], expiresAt: Int64) throws -> Bool {
        try db.execute(
            "INSERT INTO consumed_codes (nonce_hash, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [.blob(SHA256.hash(nonce)), .integer(expiresAt)]) == 1
    }

    public func pruneConsumedCodes(now: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "consumed_codes", key: "nonce_hash", condition: "expires_at <= ?", [.integer(now)], limit: limit)
    }
}
