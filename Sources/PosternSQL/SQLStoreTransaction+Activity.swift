import PosternCore

/// Accounts' activity (``ActivityWriter``).
extension SQLStoreTransaction {
    public func activity(uid: String, after cursor: ActivityCursor?, limit: Int) throws -> [ActivityEntry] {
        var entries: [ActivityEntry] = []
        // A row value, as the user list's cursor: the index (uid, at, id) is read from the cursor down.
        let after = cursor == nil ? "" : " AND (at, id) < (?, ?)"
        let args: [SQLValue] = [.text(uid)] + (cursor.map { [.integer($0.at), .integer($0.id)] } ?? []) + [.integer(Int64(max(0, limit)))]
        try db.query(
            "SELECT id, at, kind, method, device_name, network FROM account_activity WHERE uid = ?\(after) ORDER BY at DESC, id DESC LIMIT ?",
            args
        ) { row in
            entries.append(
                ActivityEntry(
                    id: row.integer(0), uid: uid, at: row.integer(1), kind: row.text(2) ?? "", method: row.text(3),
                    deviceName: row.text(4), network: row.text(5)))
        }
        return entries
    }

    public func hasSignIn(uid: String, since: Int64, from origin: SessionOrigin?) throws -> Bool {
        // IS NOT DISTINCT FROM is PostgreSQL's spelling of SQLite's IS: both match NULL to NULL.
        let same = db.dialect == .sqlite ? "IS" : "IS NOT DISTINCT FROM"
        let device = origin == nil ? "" : " AND device_name \(same) ? AND network \(same) ?"
        let args: [SQLValue] = origin.map { [$0.deviceName.map(SQLValue.text) ?? .null, $0.network.map(SQLValue.text) ?? .null] } ?? []
        return try db.first(
            "SELECT 1 FROM account_activity WHERE uid = ? AND at >= ? AND kind = 'signIn'\(device) LIMIT 1",
            [.text(uid), .integer(since)] + args
        ) { _ in true } ?? false
    }

    public func recordActivity(_ e: ActivityEntry) throws {
        try db.execute(
            "INSERT INTO account_activity (uid, at, kind, method, device_name, network) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(e.uid), .integer(e.at), .text(e.kind), e.method.map(SQLValue.text) ?? .null, e.deviceName.map(SQLValue.text) ?? .null,
                e.network.map(SQLValue.text) ?? .null,
            ])
    }

    public func pruneActivity(olderThan horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "account_activity", key: "id", condition: "at <= ?", [.integer(horizon)], limit: limit)
    }
}
