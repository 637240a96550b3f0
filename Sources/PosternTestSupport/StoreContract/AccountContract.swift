import Foundation
import PosternCore
import PosternCrypto
import Synchronization

/// Accounts: by uid and by address, the one account per address, updates and deletes, pages for
/// export, the importer, and a write that fails leaving nothing.
enum AccountContract {
    static func account(_ uid: String, _ email: String?) throws -> Account {
        Account(uid: uid, email: try email.map { try EmailAddress.parse($0) }, createdAt: 1_800_000_000, providers: [.emailLink])
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("accounts", "accounts page in uid order for export") { store in
            let uids = (0..<25).map { String(format: "u%03d", 24 - $0) }
            try store.write { tx in
                for uid in uids {
                    try tx.insertAccount(Account(uid: uid, email: try EmailAddress.parse("\(uid)@example.com"), createdAt: 1))
                }
                try tx.insertAccount(Account(uid: "anonymous", createdAt: 2))
            }
            var seen: [String] = []
            var after: String?
            while true {
                let cursor = after
                let page = try store.read { try $0.accounts(after: cursor, limit: 10) }
                guard let last = page.last else { break }
                try expectContract(page.count <= 10)
                seen += page.map(\.uid)
                after = last.uid
            }
            try expectContract(seen == (uids + ["anonymous"]).sorted())
            try expectContract(try store.read { try $0.accounts(after: nil, limit: 100) }.first { $0.uid == "u007" }?.email?.address == "u007@example.com")
        },
        StoreContractCase("accounts", "the user list pages newest first (time, then uid) with ties, prefixes taken literally, a uid exactly") { store in
            // Six at 200 (ties broken by uid, descending), one each at 190..<200, one anonymous.
            try store.write { tx in
                for uid in ["t1", "t2", "t3", "t4", "t5", "t6"] {
                    try tx.insertAccount(Account(uid: uid, email: try EmailAddress.parse("\(uid)@example.com"), createdAt: 200))
                }
                for at in Int64(190)..<200 {
                    try tx.insertAccount(Account(uid: "o\(at)", email: try EmailAddress.parse("Old\(at)@example.com"), createdAt: at))
                }
                try tx.insertAccount(Account(uid: "anon", createdAt: 150))
                try tx.insertAccount(Account(uid: "pct", email: try EmailAddress.parse("a%b@example.com"), createdAt: 1))
                try tx.insertAccount(Account(uid: "und", email: try EmailAddress.parse("a_c@example.com"), createdAt: 2))
                try tx.insertAccount(Account(uid: "plain", email: try EmailAddress.parse("axbc@example.com"), createdAt: 3))
            }
            var seen: [String] = []
            var cursor: UserCursor?
            var pages = 0
            repeat {
                let after = cursor
                let page = try store.read { try $0.accounts(newestFirstAfter: after, matching: nil, limit: 4) }
                try expectContract(page.count <= 4, "at most the limit")
                seen += page.map(\.uid)
                cursor = page.count == 4 ? page.last.map { UserCursor(createdAt: $0.createdAt, uid: $0.uid) } : nil
                pages += 1
            } while cursor != nil && pages < 20
            let expected = ["t6", "t5", "t4", "t3", "t2", "t1"] + (190..<200).reversed().map { "o\($0)" } + ["anon", "plain", "und", "pct"]
            try expectContract(seen, equals: expected, "every account once, newest first")
            let tail = try store.read { try $0.accounts(newestFirstAfter: UserCursor(createdAt: 200, uid: "t3"), matching: nil, limit: 3) }
            try expectContract(tail.map(\.uid), equals: ["t2", "t1", "o199"], "after a tie")
            func matching(_ text: String, after: UserCursor? = nil) throws -> [String] {
                try store.read { try $0.accounts(newestFirstAfter: after, matching: UserQuery(text), limit: 100) }.map(\.uid)
            }
            try expectContract(try matching("OLD19"), equals: (190..<200).reversed().map { "o\($0)" }, "a prefix, case-insensitive")
            try expectContract(try matching("old19", after: UserCursor(createdAt: 195, uid: "o195")), equals: ["o194", "o193", "o192", "o191", "o190"],
                               "a prefix after a cursor")
            try expectContract(try matching("a%"), equals: ["pct"], "% is a character, not a wildcard")
            try expectContract(try matching("a_"), equals: ["und"], "_ is a character, not a wildcard")
            try expectContract(try matching("%"), equals: [], "a lone % matches nothing")
            try expectContract(try matching("anon"), equals: ["anon"], "a uid, exactly (an account without an address)")
            try expectContract(try matching("t"), equals: ["t6", "t5", "t4", "t3", "t2", "t1"], "t: the addresses t1…t6, not the uids o…")
            try expectContract(try matching("o19"), equals: [], "part of a uid is no match")
        },
        StoreContractCase("accounts", "a password hash of a scheme is found by its marker, taken as it is (no wildcards)") { store in
            try store.write { tx in
                var postern = Account(uid: "p", email: try EmailAddress.parse("p@example.com"), createdAt: 1)
                postern.passwordHash = "$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA"
                var imported = Account(uid: "b", email: try EmailAddress.parse("b@example.com"), createdAt: 1)
                imported.passwordHash = "$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234"
                try tx.insertAccount(postern)
                try tx.insertAccount(imported)
                try tx.insertAccount(Account(uid: "n", email: try EmailAddress.parse("n@example.com"), createdAt: 1))
            }
            try expectContract(try store.read { try $0.passwordHashSample(prefix: "$2b$") }?.hasPrefix("$2b$10$") == true)
            try expectContract(try store.read { try $0.passwordHashSample(prefix: "$2a$") } == nil)
            try expectContract(try store.read { try $0.passwordHashSample(prefix: "$firebase-scrypt$") } == nil)
            try expectContract(try store.read { try $0.passwordHashSample(prefix: "%") } == nil, "a LIKE wildcard matches nothing")
        },
        StoreContractCase("accounts", "the importer skips known uids, reports taken addresses, commits in batches") { store in
            try store.write { try $0.insertAccount(Account(uid: "owner", email: try EmailAddress.parse("taken@example.com"), createdAt: 1)) }
            var rows = try (0..<7).map { i in
                ImportRow(line: i + 1, .success(Account(uid: "i\(i)", email: try EmailAddress.parse("i\(i)@example.com"), createdAt: 5)))
            }
            rows.append(ImportRow(line: 8, .success(Account(uid: "x", email: try EmailAddress.parse("TAKEN@example.com"), createdAt: 5))))
            rows.append(ImportRow(line: 9, .failure(ImportProblem("invalid email"))))
            rows.append(ImportRow(line: 10, .success(Account(uid: "i0", email: try EmailAddress.parse("other@example.com"), createdAt: 5))))
            let importer = AccountImporter(store: store, batchSize: 3)
            let strict = try importer.run(rows, strict: true)
            try expectContract(strict.abandoned && strict.imported == 0)
            let dry = try importer.run(rows, dryRun: true)
            try expectContract(dry.imported == 7 && dry.skipped == 1)
            try expectContract(try store.read { try $0.account(uid: "i0") } == nil, "a dry run writes nothing")
            var batches: [Int] = []
            let summary = try importer.run(rows) { batches.append($0) }
            try expectContract(summary.imported == 7 && summary.skipped == 1 && summary.rows == 10)
            try expectContract(summary.conflicts == [.init(line: 8, reason: "address held by another account")])
            try expectContract(summary.malformed == [.init(line: 9, reason: "invalid email")])
            try expectContract(batches == [4, 7, 10])
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("taken@example.com")) }?.uid == "owner")
            try expectContract(try store.read { try $0.account(uid: "i0") }?.email?.address == "i0@example.com", "the repeat did not overwrite")
            let again = try importer.run(rows)
            try expectContract(again.imported == 0 && again.skipped == 8)
        },
        StoreContractCase("accounts", "an address belongs to at most one account") { store in
            let first = try account("u1", "a@example.com")
            let second = try account("u2", "A@EXAMPLE.com")
            try store.write { try $0.insertAccount(first) }
            let error = try expectContractThrows(StoreError.self) { try store.write { try $0.insertAccount(second) } }
            try expectContract(error.isAddressTaken)
            try expectContract(try store.read { try $0.account(uid: "u2") } == nil, "the refused insert left no account row")
            // A closure may go on after addressTaken: the transaction is still usable and commits.
            let third = try account("u3", "c@example.com")
            try store.write { tx in
                try expectContract(try expectContractThrows(StoreError.self) { try tx.insertAccount(second) } == .addressTaken)
                try tx.insertAccount(third)
            }
            try expectContract(try store.read { try $0.account(uid: "u3") } == third)
        },
        StoreContractCase("accounts", "accounts update, move addresses and delete") { store in
            var alice = try account("u1", "a@example.com")
            try store.write { [alice] in try $0.insertAccount(alice) }
            alice.email = try EmailAddress.parse("new@example.com")
            alice.passwordHash = "$scrypt$x"
            alice.providers = [.password, .emailLink]
            try store.write { [alice] in try $0.updateAccount(alice) }
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("a@example.com")) } == nil)
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("new@example.com")) } == alice)
            try expectContract(
                try store.read { try $0.passwordCredential(address: EmailAddress.parse("NEW@example.com")) }
                    == PasswordCredential(uid: "u1", passwordHash: "$scrypt$x"))
            try expectContract(try store.read { try $0.passwordCredential(address: EmailAddress.parse("a@example.com")) } == nil)
            let anonymous = try account("u3", nil)
            try store.write { try $0.insertAccount(anonymous) }
            try expectContract(try store.read { try $0.account(uid: "u3") }?.isAnonymous == true)
            try store.write { try $0.deleteAccount(uid: "u1") }
            try expectContract(try store.read { try $0.account(uid: "u1") } == nil)
            let gone = alice
            try expectContractThrows(StoreError.self) { try store.write { try $0.updateAccount(gone) } }
        },
        StoreContractCase("accounts", "a failure in the middle of a write leaves no half state, and other writers are unaffected") { store in
            struct Boom: Error {}
            let doomed = try account("u1", "a@example.com")
            let fine = try account("u2", "b@example.com")
            let outcomes = Mutex<[String]>([])
            onThreads(2) { index in
                do {
                    if index == 0 {
                        try store.write { tx in
                            try tx.insertAccount(doomed)
                            _ = try tx.consume(nonce: [1, 2, 3], expiresAt: 2_000_000_000)
                            throw Boom()
                        }
                        outcomes.withLock { $0.append("the failing write returned") }
                    } else {
                        try store.write { try $0.insertAccount(fine) }
                    }
                } catch is Boom {
                    outcomes.withLock { $0.append("boom") }
                } catch {
                    outcomes.withLock { $0.append("\(error)") }
                }
            }
            try expectContract(outcomes.withLock { $0 }, equals: ["boom"], "what the writers saw")
            try expectContract(try store.read { try $0.account(uid: "u1") } == nil)
            try expectContract(try store.read { try $0.isConsumed(nonce: [1, 2, 3]) } == false)
            try expectContract(try store.read { try $0.account(uid: "u2") } == fine)
        },
        StoreContractCase("accounts", "every field of an account reads back as written; its address by any case of its local part") { store in
            var full = try account("u1", "Mixed.Case@example.com")
            full.emailVerified = true
            full.passwordHash = "$scrypt$x"
            full.displayName = "Ada"
            full.attributes = #"{"role":"admin"}"#
            full.locale = "de"
            full.disabled = true
            full.lastSignInAt = 1_800_000_100
            full.providers = [.password, .emailLink, .phone]
            full.sessionVersion = 3
            let written = full
            try store.write { try $0.insertAccount(written) }
            let read = try requireContract(try store.read { try $0.account(uid: "u1") }, "the account")
            try expectContract(read, equals: written, "the account")
            try expectContract(read.email?.address, equals: "Mixed.Case@example.com", "the address as written")
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("MIXED.case@example.com")) }?.uid, equals: "u1")
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("other@example.com")) } == nil)
        },
        StoreContractCase("accounts", "a taken uid is refused and the first account kept") { store in
            let first = try account("u1", "a@example.com")
            let second = try account("u1", "b@example.com")
            try store.write { try $0.insertAccount(first) }
            try expectContractThrows((any Error).self, "a second account u1") { try store.write { try $0.insertAccount(second) } }
            try expectContract(try store.read { try $0.account(uid: "u1") } == first)
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("b@example.com")) } == nil)
        },
        StoreContractCase("accounts", "an update to an address another account holds is addressTaken, and leaves both accounts as they were") { store in
            let alice = try account("u1", "a@example.com")
            let bob = try account("u2", "b@example.com")
            try store.write { tx in
                try tx.insertAccount(alice)
                try tx.insertAccount(bob)
            }
            var moving = bob
            moving.email = try EmailAddress.parse("A@example.com")
            moving.displayName = "Bob"
            let taking = moving
            let error = try expectContractThrows(StoreError.self) { try store.write { try $0.updateAccount(taking) } }
            try expectContract(error.isAddressTaken, "addressTaken, not \(error)")
            try expectContract(try store.read { try $0.account(uid: "u2") } == bob)
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("a@example.com")) }?.uid, equals: "u1")
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("b@example.com")) }?.uid, equals: "u2")
            // Its own address, in another case: no conflict with itself.
            var recased = bob
            recased.email = try EmailAddress.parse("B@example.com")
            let own = recased
            try store.write { try $0.updateAccount(own) }
            try expectContract(try store.read { try $0.account(uid: "u2") }?.email?.address, equals: "B@example.com")
            // An address given up is free for another account.
            var leaving = alice
            leaving.email = nil
            let anonymous = leaving
            try store.write { try $0.updateAccount(anonymous) }
            try store.write { try $0.insertAccount(try account("u3", "a@example.com")) }
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("a@example.com")) }?.uid, equals: "u3")
        },
        StoreContractCase("accounts", "deleting an account frees its address and deletes its refresh tokens, not another's") { store in
            try store.write { tx in
                try tx.insertAccount(try account("u1", "a@example.com"))
                try tx.insertAccount(try account("u2", "b@example.com"))
                for (hash, uid) in [([UInt8(1)], "u1"), ([2], "u2")] {
                    try tx.insertRefreshToken(
                        RefreshTokenRecord(hash: hash, family: "f-\(uid)", uid: uid, authTime: 0, method: "m", createdAt: 0, expiresAt: 10))
                }
            }
            try store.write { try $0.deleteAccount(uid: "u1") }
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("a@example.com")) } == nil)
            try expectContract(try store.read { try $0.refreshToken(hash: [1]) } == nil, "u1's token went with it")
            try expectContract(try store.read { try $0.refreshToken(hash: [2]) }?.uid, equals: "u2")
            try store.write { try $0.insertAccount(try account("u3", "a@example.com")) }
            try expectContract(try store.read { try $0.account(address: EmailAddress.parse("a@example.com")) }?.uid, equals: "u3")
        },
    ]
}
