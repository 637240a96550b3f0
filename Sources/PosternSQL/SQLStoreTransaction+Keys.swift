import PosternCore
import PosternCrypto

/// The key ring's rows (``KeyWriter``).
extension SQLStoreTransaction {
    // MARK: keys

    public func keys(purpose: KeyPurpose) throws -> [KeyRecord] {
        var keys: [KeyRecord] = []
        try db.query(
            "SELECT id, status, created_at, retired_at, verify_until, sealed_secret FROM keys WHERE purpose = ? ORDER BY status = 'active' DESC, created_at DESC",
            [.text(purpose.rawValue)]
        ) { row in
            guard let status = row.text(1).flatMap(KeyStatus.init(rawValue:)), let sealed = row.blob(5) else {
                throw StoreError.corrupt("key row")
            }
            keys.append(
                KeyRecord(
                    id: UInt32(truncatingIfNeeded: row.integer(0)), purpose: purpose, status: status,
                    createdAt: row.integer(2), retiredAt: row.optionalInteger(3), verifyUntil: row.optionalInteger(4),
                    sealedSecret: sealed))
        }
        return keys
    }

    public func insertKey(_ key: KeyRecord) throws {
        try db.execute(
            "INSERT INTO keys (id, purpose, status, created_at, retired_at, verify_until, sealed_secret) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                .integer(Int64(key.id)), .text(key.purpose.rawValue), .text(key.status.rawValue), .integer(key.createdAt),
                key.retiredAt.map(SQLValue.integer) ?? .null, key.verifyUntil.map(SQLValue.integer) ?? .null,
                .blob(key.sealedSecret),
            ])
    }

    public func updateKey(_ key: KeyRecord) throws {
        let changed = try db.execute(
            "UPDATE keys SET status = ?, retired_at = ?, verify_until = ? WHERE id = ?",
            [
                .text(key.status.rawValue), key.retiredAt.map(SQLValue.integer) ?? .null,
                key.verifyUntil.map(SQLValue.integer) ?? .null, .integer(Int64(key.id)),
            ])
        guard changed == 1 else { throw StoreError.notFound("key") }
    }

    public func removeExpiredKeys(purpose: KeyPurpose, now: Int64) throws -> Int {
        try db.execute(
            "DELETE FROM keys WHERE purpose = ? AND status = 'retired' AND verify_until <= ?",
            [.text(purpose.rawValue), .integer(now)])
    }
}
