import PosternCore

/// The signing keys' rows (``KeyVault``): by purpose, active first, updated in place, and removed
/// once a retired key verifies nothing more.
enum KeyContract {
    static func key(_ id: UInt32, _ status: KeyStatus, purpose: KeyPurpose = .actionCode, at: Int64, verifyUntil: Int64? = nil) -> KeyRecord {
        KeyRecord(
            id: id, purpose: purpose, status: status, createdAt: at, retiredAt: status == .retired ? at + 5 : nil, verifyUntil: verifyUntil,
            sealedSecret: [UInt8(id), 1, 2])
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("keys", "keys of a purpose read back active first, then newest first; an update replaces the metadata; a missing key is notFound") {
            store in
            try store.write { tx in
                try tx.insertKey(key(1, .retired, at: 100, verifyUntil: 500))
                try tx.insertKey(key(2, .active, at: 200))
                try tx.insertKey(key(3, .retired, at: 300, verifyUntil: 600))
                try tx.insertKey(key(4, .active, purpose: .idToken, at: 400))
            }
            try expectContract(try store.read { try $0.keys(purpose: .actionCode) }.map(\.id), equals: [2, 3, 1], "action-code keys")
            try expectContract(try store.read { try $0.keys(purpose: .idToken) }, equals: [key(4, .active, purpose: .idToken, at: 400)], "id-token keys")
            try expectContract(try store.read { try $0.keys(purpose: .firebaseHashKey) }.isEmpty, "no firebase key")
            let retired = key(2, .retired, at: 200, verifyUntil: 900)
            try store.write { try $0.updateKey(retired) }
            try expectContract(try store.read { try $0.keys(purpose: .actionCode) }.first { $0.id == 2 }, equals: retired, "the updated key")
            try expectContractThrows(StoreError.self) { try store.write { try $0.updateKey(key(9, .active, at: 1)) } }
            try expectContractThrows((any Error).self, "a second key 1") { try store.write { try $0.insertKey(key(1, .active, at: 1)) } }
        },
        StoreContractCase("keys", "a retired key goes once its verifyUntil has passed, and only then; an active key or one with no verifyUntil stays") { store in
            try store.write { tx in
                try tx.insertKey(key(1, .retired, at: 100, verifyUntil: 500))
                try tx.insertKey(key(2, .retired, at: 100, verifyUntil: 501))
                try tx.insertKey(key(3, .active, at: 100, verifyUntil: 10))
                try tx.insertKey(key(4, .retired, at: 100))
                try tx.insertKey(key(5, .retired, purpose: .idToken, at: 100, verifyUntil: 10))
            }
            try expectContract(try store.write { try $0.removeExpiredKeys(purpose: .actionCode, now: 499) }, equals: 0, "removed at 499")
            try expectContract(try store.write { try $0.removeExpiredKeys(purpose: .actionCode, now: 500) }, equals: 1, "removed at 500")
            try expectContract(try store.read { try $0.keys(purpose: .actionCode) }.map(\.id).sorted(), equals: [2, 3, 4], "kept")
            try expectContract(try store.read { try $0.keys(purpose: .idToken) }.map(\.id), equals: [5], "another purpose untouched")
        },
    ]
}
