import Foundation
import PosternCore
import PosternCrypto

/// Action requests (a link's or a code's server side) and the single-use ledger of consumed codes.
enum ActionRequestContract {
    static let address = EmailAddress.restored(localPart: "Ada", domain: "example.com")

    static func request(_ id: String, _ purpose: ActionRequest.Purpose = .signIn, email: EmailAddress = address, at: Int64, expiresAt: Int64? = nil)
        -> ActionRequest
    {
        ActionRequest(id: id, purpose: purpose, email: email, createdAt: at, expiresAt: expiresAt ?? at + 600)
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("actionRequests", "50 threads consuming one code: exactly one wins") { store in
            let nonce = try SecureRandom.bytes(16)
            let wins = Counter()
            let failures = Counter()
            DispatchQueue.concurrentPerform(iterations: 50) { _ in
                do {
                    if try store.write({ try $0.consume(nonce: nonce, expiresAt: 2_000_000_000) }) { wins.increment() }
                } catch {
                    failures.increment()
                }
            }
            try expectContract(wins.value == 1)
            try expectContract(failures.value == 0, "every loser is told false, none fails")
            try expectContract(try store.read { try $0.isConsumed(nonce: nonce) })
            try expectContract(try store.write { try $0.pruneConsumedCodes(now: 2_000_000_001, limit: 500) } == 1)
        },
        StoreContractCase("actionRequests", "a code is consumed once: the second consume is false; pruned from its expiry on, not before") { store in
            try expectContract(try store.read { try $0.isConsumed(nonce: [1]) } == false, "unused")
            try expectContract(try store.write { try $0.consume(nonce: [1], expiresAt: 100) }, "the first consume")
            try expectContract(try store.write { try $0.consume(nonce: [1], expiresAt: 900) } == false, "the second consume")
            try expectContract(try store.write { try $0.consume(nonce: [2], expiresAt: 200) }, "another code")
            try expectContract(try store.read { try $0.isConsumed(nonce: [1]) }, "used")
            // The second consume kept the first expiry: the entry goes at 100.
            try expectContract(try store.write { try $0.pruneConsumedCodes(now: 99, limit: 10) }, equals: 0, "pruned at 99")
            try expectContract(try store.write { try $0.pruneConsumedCodes(now: 100, limit: 10) }, equals: 1, "pruned at 100")
            try expectContract(try store.read { try $0.isConsumed(nonce: [1]) } == false, "forgotten")
            try expectContract(try store.read { try $0.isConsumed(nonce: [2]) }, "the other kept")
        },
        StoreContractCase("actionRequests", "every field of a request reads back as written, and an update replaces them; a missing request is notFound") { store in
            var full = ActionRequest(
                id: "r1", purpose: .changeEmail, email: EmailAddress.restored(localPart: "Old.Case", domain: "example.com"), uid: "u1",
                otherEmail: EmailAddress.restored(localPart: "New", domain: "example.org"), passwordHash: "$scrypt$h",
                continueURL: "https://app.example.com/done", locale: "fr", codeChallenge: "challenge", createdAt: 100, expiresAt: 700,
                sixDigitKeyID: 7, wrongTries: 1, consumedAt: nil, approval: ActionRequest.Approval(number: 42, device: "Firefox"),
                browserBound: true)
            let written = full
            try store.write { try $0.insertActionRequest(written) }
            try expectContract(try store.read { try $0.actionRequest(id: "r1") }, equals: written, "the request")
            full.wrongTries = 2
            full.consumedAt = 150
            full.approval = ActionRequest.Approval(number: 42, device: "Firefox", approvedAt: 140)
            let changed = full
            try store.write { try $0.updateActionRequest(changed) }
            try expectContract(try store.read { try $0.actionRequest(id: "r1") }, equals: changed, "the updated request")
            try expectContract(try store.read { try $0.actionRequest(id: "r2") } == nil, "no r2")
            try expectContractThrows(StoreError.self) { try store.write { try $0.updateActionRequest(request("r2", at: 1)) } }
            try expectContractThrows((any Error).self, "a second r1") { try store.write { try $0.insertActionRequest(request("r1", at: 1)) } }
            try expectContract(try store.read { try $0.actionRequest(id: "r1") }, equals: changed, "r1 kept")
        },
        StoreContractCase("actionRequests", "a batch's requests and their addresses' accounts in one read each: found ones by key, missing ones absent, any batch size") { store in
            let ids = (0..<40).map { "b\($0)" }
            try store.write { tx in
                for (index, id) in ids.enumerated() {
                    try tx.insertActionRequest(request(id, email: EmailAddress.restored(localPart: "p\(index)", domain: "example.com"), at: 100))
                }
                for index in stride(from: 0, to: 40, by: 3) {
                    try tx.insertAccount(Account(uid: "u\(index)", email: try EmailAddress.parse("P\(index)@Example.com"), createdAt: 1))
                }
            }
            for size in [0, 1, 3, 17, 40] {
                let asked = Array(ids.prefix(size)) + ["missing", ids.first ?? "b0"]
                let requests = try store.read { try $0.actionRequests(ids: asked) }
                try expectContract(Set(requests.keys) == Set(ids.prefix(max(1, size))), "size \(size): the requests found")
                try expectContract(requests.allSatisfy { $0.key == $0.value.id })
                let addresses = requests.values.map(\.email) + [EmailAddress.restored(localPart: "nobody", domain: "example.com")]
                let holders = try store.read { try $0.accounts(addresses: addresses) }
                let expected = Set(requests.values.compactMap { request -> String? in
                    Int(request.id.dropFirst()).flatMap { $0 % 3 == 0 ? request.email.normalized : nil }
                })
                try expectContract(Set(holders.keys) == expected, "size \(size): the accounts found by normalized address")
                try expectContract(holders.allSatisfy { $0.value.email?.normalized == $0.key && $0.value.uid.hasPrefix("u") })
            }
            try expectContract(try store.read { try $0.actionRequests(ids: []) }.isEmpty && store.read { try $0.accounts(addresses: []) }.isEmpty)
        },
        StoreContractCase("actionRequests", "the open requests of an address: its purpose, unused, unexpired, newest first, by the address in any case") { store in
            try store.write { tx in
                try tx.insertActionRequest(request("old", at: 100))
                try tx.insertActionRequest(request("new", at: 300))
                try tx.insertActionRequest(request("middle", at: 200))
                try tx.insertActionRequest(request("expired", at: 0, expiresAt: 650))
                var used = request("used", at: 400)
                used.consumedAt = 450
                try tx.insertActionRequest(used)
                try tx.insertActionRequest(request("reset", .resetPassword, at: 500))
                try tx.insertActionRequest(request("other", email: EmailAddress.restored(localPart: "bob", domain: "example.com"), at: 500))
            }
            let open = try store.read {
                try $0.openActionRequests(purpose: .signIn, address: EmailAddress.restored(localPart: "ADA", domain: "example.com"), now: 650)
            }
            try expectContract(open.map(\.id), equals: ["new", "middle", "old"], "open sign-in requests")
            try expectContract(
                try store.read { try $0.openActionRequests(purpose: .resetPassword, address: address, now: 650) }.map(\.id), equals: ["reset"],
                "open resets")
            try expectContract(try store.read { try $0.openActionRequests(purpose: .signIn, address: address, now: 5_000) }.isEmpty, "all expired")
        },
        StoreContractCase("actionRequests", "requests are pruned at their expiry, not before, at most the limit at a time") { store in
            try store.write { tx in
                for index in 0..<3 { try tx.insertActionRequest(request("r\(index)", at: 0, expiresAt: 100)) }
                try tx.insertActionRequest(request("late", at: 0, expiresAt: 101))
            }
            try expectContract(try store.write { try $0.pruneActionRequests(expiredBy: 99, limit: 10) }, equals: 0, "pruned at 99")
            try expectContract(try store.write { try $0.pruneActionRequests(expiredBy: 100, limit: 2) }, equals: 2, "the first batch")
            try expectContract(try store.write { try $0.pruneActionRequests(expiredBy: 100, limit: 2) }, equals: 1, "the second batch")
            try expectContract(try store.read { try $0.actionRequest(id: "late") } != nil, "the later one kept")
        },
    ]
}
