import PosternCore

/// Accounts' activity (``ActivityWriter``).
extension InMemoryStore.Transaction {
    public func activity(uid: String, after cursor: ActivityCursor?, limit: Int) throws -> [ActivityEntry] {
        Array(
            state.activity.filter { $0.uid == uid && cursor?.precedes(at: $0.at, id: $0.id) ?? true }
                .sorted { ($0.at, $0.id) > ($1.at, $1.id) }
                .prefix(max(0, limit)))
    }

    public func hasSignIn(uid: String, deviceName: String?, network: String?, since: Int64) throws -> Bool {
        state.activity.contains {
            $0.uid == uid && $0.at >= since && $0.kind == "signIn" && $0.deviceName == deviceName && $0.network == network
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
