import PosternCore

/// The key ring's rows (``KeyWriter``).
extension InMemoryStore.Transaction {
    public func keys(purpose: KeyPurpose) throws -> [KeyRecord] {
        state.keys.values.filter { $0.purpose == purpose }
            .sorted { ($0.status == .active ? 0 : 1, -$0.createdAt) < ($1.status == .active ? 0 : 1, -$1.createdAt) }
    }

    public func insertKey(_ key: KeyRecord) throws {
        guard state.keys[key.id] == nil else { throw StoreError.duplicate("keys_pkey") }
        state.keys[key.id] = key
    }

    public func updateKey(_ key: KeyRecord) throws {
        guard state.keys[key.id] != nil else { throw StoreError.notFound("key") }
        state.keys[key.id] = key
    }

    public func removeExpiredKeys(purpose: KeyPurpose, now: Int64) throws -> Int {
        // A retired key without `verifyUntil` stays, as SQL's `verify_until <= ?` never holds for NULL.
        let doomed = state.keys.values.filter { key in
            key.purpose == purpose && key.status == .retired && key.verifyUntil.map { $0 <= now } == true
        }
        for key in doomed { state.keys[key.id] = nil }
        return doomed.count
    }
}
