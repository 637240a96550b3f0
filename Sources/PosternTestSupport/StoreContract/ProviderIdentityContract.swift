import PosternCore
import Synchronization

/// Identity providers' subjects linked to accounts (issue 46): read back as written, listed oldest
/// first; (provider, subject) linked to one account and an account holding one identity of a
/// provider, the unique keys deciding between concurrent writers; an account that does not exist
/// refused; touched, unlinked either way, and deleted with the account. The replay ledger of
/// providers' ID tokens: a token is used once, also when many use it at once, and pruned at its
/// horizon in batches.
enum ProviderIdentityContract {
    static let address = EmailAddress.restored(localPart: "Ada.Lovelace", domain: "example.com")

    static func identity(
        _ provider: String, _ subject: String, uid: String = "u1", email: EmailAddress? = address, verified: Bool = true, at: Int64 = 1_000
    ) -> ProviderIdentityLink {
        ProviderIdentityLink(provider: provider, subject: subject, uid: uid, email: email, emailVerified: verified, createdAt: at, lastUsedAt: at)
    }

    static func account(_ store: any Store, _ uids: String...) throws {
        try store.write { tx in for uid in uids { try tx.insertAccount(Account(uid: uid, createdAt: 1)) } }
    }

    static var cases: [StoreContractCase] { identityCases + ledgerCases }

    static let identityCases: [StoreContractCase] = [
        StoreContractCase("provider identities", "an identity reads back as written, with and without an address; an account's are listed oldest first") { store in
            try account(store, "u1", "u2")
            let google = identity("google", "1084", at: 1_020)
            let apple = identity("apple", "001234.abcd.5678", email: nil, verified: false, at: 1_010)
            let generic = identity("oidc:corp", "x", at: 1_030)
            let other = identity("google", "2000", uid: "u2")
            try store.write { tx in
                for link in [google, apple, generic, other] { try expectContract(try tx.insertProviderIdentity(link), "\(link.provider) linked") }
            }
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "1084") }, equals: google, "google")
            try expectContract(try store.read { try $0.providerIdentity(provider: "apple", subject: "001234.abcd.5678") }, equals: apple, "apple")
            try expectContract(
                try store.read { try $0.providerIdentity(provider: "google", subject: "1084") }?.email?.localPart, equals: "Ada.Lovelace",
                "the local part as given")
            try expectContract(try store.read { try $0.providerIdentity(provider: "apple", subject: "1084") } == nil, "a subject is per provider")
            try expectContract(try store.read { try $0.providerIdentities(uid: "u1") }, equals: [apple, google, generic], "u1's, oldest first")
            try expectContract(try store.read { try $0.providerIdentities(uid: "u2") }, equals: [other], "u2's")
            try expectContract(try store.read { try $0.providerIdentities(uid: "nobody") }.isEmpty, "nobody's")
        },
        StoreContractCase("provider identities", "a linked (provider, subject) and a second identity of a provider for one account are refused with false, and the transaction goes on") { store in
            try account(store, "u1", "u2")
            let first = identity("google", "1084")
            try expectContract(try store.write { try $0.insertProviderIdentity(first) }, "the first link")
            let (taken, secondOfProvider, otherProvider) = (identity("google", "1084", uid: "u2"), identity("google", "9999"), identity("apple", "a1"))
            let outcomes = try store.write { tx in
                // After a refusal the same transaction still writes (PostgreSQL aborts one whose statement failed).
                [try tx.insertProviderIdentity(taken), try tx.insertProviderIdentity(secondOfProvider), try tx.insertProviderIdentity(otherProvider)]
            }
            try expectContract(outcomes, equals: [false, false, true], "taken subject, second google, apple")
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "1084") }, equals: first, "the first kept")
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "9999") } == nil, "the second not written")
            try expectContract(try store.read { try $0.providerIdentities(uid: "u2") }.isEmpty, "u2 has none")
        },
        StoreContractCase("provider identities", "of many linking one (provider, subject) to different accounts at once, exactly one gets true") { store in
            let uids = (0..<8).map { "u\($0)" }
            try store.write { tx in for uid in uids { try tx.insertAccount(Account(uid: uid, createdAt: 1)) } }
            let outcomes = Mutex<[String]>([])
            onThreads(uids.count) { index in
                let outcome: String
                do {
                    outcome = try store.write { try $0.insertProviderIdentity(identity("apple", "shared", uid: uids[index])) } ? "linked" : "refused"
                } catch {
                    outcome = "threw \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
            }
            try expectContract(outcomes.withLock { $0 }.sorted(), equals: ["linked"] + Array(repeating: "refused", count: uids.count - 1), "outcomes")
            let holder = try requireContract(try store.read { try $0.providerIdentity(provider: "apple", subject: "shared") }, "the link")
            try expectContract(uids.contains(holder.uid), "linked to one of them")
        },
        StoreContractCase("provider identities", "an identity of an account that does not exist is refused with notFound, nothing stored") { store in
            let error = try expectContractThrows(StoreError.self, "a link to nobody") {
                try store.write { try $0.insertProviderIdentity(identity("google", "1084", uid: "ghost")) }
            }
            try expectContract(error, equals: StoreError.notFound("account"), "the error")
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "1084") } == nil, "nothing stored")
        },
        StoreContractCase("provider identities", "a touch sets the last use and the address vouched for now; touching one not linked does nothing") { store in
            try account(store, "u1")
            try store.write { _ = try $0.insertProviderIdentity(identity("google", "1084")) }
            let newer = EmailAddress.restored(localPart: "ada", domain: "example.org")
            try store.write { try $0.touchProviderIdentity(provider: "google", subject: "1084", email: newer, emailVerified: false, at: 2_000) }
            var touched = identity("google", "1084", email: newer, verified: false)
            touched.lastUsedAt = 2_000
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "1084") }, equals: touched, "touched")
            try expectContract(
                try store.read { try $0.providerIdentity(provider: "google", subject: "1084") }?.email?.address, equals: "ada@example.org", "address")
            try store.write { try $0.touchProviderIdentity(provider: "google", subject: "1084", email: nil, emailVerified: false, at: 3_000) }
            touched.email = nil
            touched.lastUsedAt = 3_000
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "1084") }, equals: touched, "no address now")
            try store.write { try $0.touchProviderIdentity(provider: "apple", subject: "1084", email: nil, emailVerified: true, at: 3_000) }
            try expectContract(try store.read { try $0.providerIdentity(provider: "apple", subject: "1084") } == nil, "nothing made")
        },
        StoreContractCase("provider identities", "an identity is unlinked by account and provider, or by provider and subject (giving its account)") { store in
            try account(store, "u1", "u2")
            try store.write { tx in
                for link in [identity("google", "g1"), identity("apple", "a1"), identity("google", "g2", uid: "u2")] {
                    _ = try tx.insertProviderIdentity(link)
                }
            }
            try expectContract(try store.write { try $0.deleteProviderIdentity(uid: "u1", provider: "google") }, "u1's google")
            try expectContract(try store.write { try $0.deleteProviderIdentity(uid: "u1", provider: "google") } == false, "gone already")
            try expectContract(try store.write { try $0.deleteProviderIdentity(uid: "u1", provider: "oidc:corp") } == false, "none of that provider")
            try expectContract(try store.write { try $0.deleteProviderIdentity(uid: "u2", provider: "apple") } == false, "u2 has no apple")
            try expectContract(try store.read { try $0.providerIdentities(uid: "u1") }.map(\.provider), equals: ["apple"], "u1 keeps apple")
            try expectContract(try store.write { try $0.deleteProviderIdentity(provider: "google", subject: "g2") }, equals: "u2", "g2's account")
            try expectContract(try store.write { try $0.deleteProviderIdentity(provider: "google", subject: "g2") } == nil, "g2 gone")
            try expectContract(try store.write { try $0.deleteProviderIdentity(provider: "google", subject: "a1") } == nil, "a1 is apple's")
            try expectContract(try store.read { try $0.providerIdentities(uid: "u2") }.isEmpty, "u2 has none")
            try expectContract(try store.write { try $0.insertProviderIdentity(identity("google", "g1", uid: "u2")) }, "g1 free to link again")
        },
        StoreContractCase("provider identities", "deleting the account deletes its identities, and their subjects may link to another account") { store in
            try account(store, "u1", "u2")
            try store.write { tx in
                for link in [identity("google", "g1"), identity("apple", "a1"), identity("apple", "a2", uid: "u2")] {
                    _ = try tx.insertProviderIdentity(link)
                }
            }
            try store.write { try $0.deleteAccount(uid: "u1") }
            try expectContract(try store.read { try $0.providerIdentities(uid: "u1") }.isEmpty, "u1's gone")
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "g1") } == nil, "g1 gone")
            try expectContract(try store.read { try $0.providerIdentities(uid: "u2") }.map(\.subject), equals: ["a2"], "u2's kept")
            try expectContract(try store.write { try $0.insertProviderIdentity(identity("google", "g1", uid: "u2")) }, "g1 links to u2")
        },
        StoreContractCase("provider identities", "the importer links a row's identities, and a row with one linked to another account is a conflict, nothing of it written") { store in
            try account(store, "holder")
            try store.write { _ = try $0.insertProviderIdentity(identity("google", "taken", uid: "holder")) }
            let rows = [
                ImportRow(line: 1, .success(Account(uid: "i1", createdAt: 5)), identities: [identity("apple", "a1", uid: ""), identity("google", "g1", uid: "")]),
                ImportRow(line: 2, .success(Account(uid: "i2", createdAt: 5)), identities: [identity("apple", "a2", uid: ""), identity("google", "taken", uid: "")]),
                ImportRow(line: 3, .success(Account(uid: "i3", createdAt: 5)), identities: [identity("apple", "a1", uid: "")]),
            ]
            let summary = try AccountImporter(store: store, batchSize: 2).run(rows)
            try expectContract(summary.imported, equals: 1, "imported")
            try expectContract(
                summary.conflicts, equals: [.init(line: 2, reason: "identity linked to another account"), .init(line: 3, reason: "identity linked to another account")],
                "conflicts")
            try expectContract(try store.read { try $0.providerIdentities(uid: "i1") }.map(\.subject), equals: ["a1", "g1"], "i1's")
            try expectContract(try store.read { try $0.providerIdentity(provider: "google", subject: "taken") }?.uid, equals: "holder", "not moved")
            try expectContract(try store.read { try $0.providerIdentity(provider: "apple", subject: "a2") } == nil, "nothing of row 2")
            try expectContract(try store.read { try $0.account(uid: "i2") } == nil && store.read { try $0.account(uid: "i3") } == nil, "rows 2, 3")
        },
    ]

    static let ledgerCases: [StoreContractCase] = [
        StoreContractCase("provider identities", "a provider's token is used once: the first use is true, every later one false") { store in
            let hash = Array(repeating: UInt8(0xA1), count: 32)
            try expectContract(try store.write { try $0.useProviderToken(hash: hash, expiresAt: 1_600) }, "first use")
            try expectContract(try store.write { try $0.useProviderToken(hash: hash, expiresAt: 1_600) } == false, "a replay")
            try expectContract(try store.write { try $0.useProviderToken(hash: hash, expiresAt: 9_999) } == false, "a replay, whatever its expiry")
            try expectContract(try store.write { try $0.useProviderToken(hash: [0xA2] + hash.dropFirst(), expiresAt: 1_600) }, "another token")
        },
        StoreContractCase("provider identities", "a use in a transaction that throws leaves the token unused") { store in
            struct Abandoned: Error {}
            try expectContractThrows(Abandoned.self, "the abandoned sign-in") {
                try store.write { tx in
                    _ = try tx.useProviderToken(hash: [1, 2, 3], expiresAt: 1_600)
                    throw Abandoned()
                }
            }
            try expectContract(try store.write { try $0.useProviderToken(hash: [1, 2, 3], expiresAt: 1_600) }, "used later")
        },
        StoreContractCase("provider identities", "of many using one token at once, exactly one gets true") { store in
            let outcomes = Mutex<[String]>([])
            onThreads(20) { _ in
                let outcome: String
                do {
                    outcome = try store.write { try $0.useProviderToken(hash: [9, 9, 9], expiresAt: 1_600) } ? "used" : "replayed"
                } catch {
                    outcome = "threw \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
            }
            try expectContract(outcomes.withLock { $0 }.sorted(), equals: Array(repeating: "replayed", count: 19) + ["used"], "outcomes")
        },
        StoreContractCase("provider identities", "token uses are pruned at or before the horizon, at most the limit at a time") { store in
            try store.write { tx in
                for index in 0..<5 { _ = try tx.useProviderToken(hash: [UInt8(index)], expiresAt: 100) }
                _ = try tx.useProviderToken(hash: [0xFF], expiresAt: 101)
            }
            try expectContract(try store.write { try $0.pruneProviderTokenUses(expiredBy: 99, limit: 10) }, equals: 0, "none before 100")
            try expectContract(try store.write { try $0.pruneProviderTokenUses(expiredBy: 100, limit: 2) }, equals: 2, "the limit")
            try expectContract(try store.write { try $0.pruneProviderTokenUses(expiredBy: 100, limit: 10) }, equals: 3, "the rest at 100")
            // A pruned token is no longer known; the one past the horizon still is.
            try expectContract(try store.write { try $0.useProviderToken(hash: [0], expiresAt: 100) }, "pruned: unknown again")
            try expectContract(try store.write { try $0.useProviderToken(hash: [0xFF], expiresAt: 101) } == false, "kept: still a replay")
            try expectContract(try store.write { try $0.pruneProviderTokenUses(expiredBy: 101, limit: 10) }, equals: 2, "both at 101")
        },
    ]
}
