import PosternCore

/// Accounts' activity (``ActivityWriter``).
extension InMemoryStore.Transaction {
    public func activity(uid: String, after cursor: ActivityCursor?, limit: Int) throws -> [ActivityEntry] {
        Array(
            state.activity.filter { $0.uid == uid && cursor?.precedes(at: $0.at, id: $0.id) ?? true }
                .sorted { ($0.at, $0.id) > ($1.at, $1.id) }
                .prefix(max(0, limit)))
    }

    public func hasSignIn(uid: String, since: Int64, from origin: SessionOrigin?) throws -> Bool {
        state.activity.contains { entry in
            entry.uid == uid && entry.at >= since && entry.kind == "signIn"
                && (origin.map { entry.deviceName == $0.deviceName && entry.network == $0.network } ?? true)
        }
    }

    public func recordActivity(_ entry: ActivityEntry) throws {
        state.lastActivityID += 1
        var entry = entry
        entry.id = state.lastActivityID
        state.activity.append(entry)
    }

    public func pruneActivity(olderThan horizon: Int64, limit: Int) throws -> Int {
        var removed = 0
        state.activity.removeAll { entry in
            guard removed < limit, entry.at <= horizon else { return false }
            removed += 1
            return true
        }
        return removed
    }
}
