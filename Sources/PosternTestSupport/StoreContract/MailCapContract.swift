import Foundation
import PosternCore

/// The mail caps (``MailCaps``) over each store, through the flows: counted in the database, so
/// two daemons on it share one cap, concurrent requests never pass it together, and a refusal rolls
/// back everything its write counted.
enum MailCapContract {
    static func harness(_ store: any Store, domain: Int64, total: Int64 = 0, perAddress: Int64 = 0) throws -> FlowHarness {
        try FlowHarness(store) {
            $0.mailPerHour = perAddress
            $0.mailCaps = MailCapConfiguration(domainPerHour: domain, totalPerHour: total)
        }
    }

    /// Sends a sign-in link to `email`; the error's code when refused.
    static func send(_ h: FlowHarness, _ email: String) -> String? {
        do { try h.service.emailLink.send(EmailLinkRequest(email: email)) } catch { return error.code }
        return nil
    }

    static func queued(_ store: any Store) throws -> Int {
        try store.read { try $0.outboxMessages(state: nil, limit: 1_000) }.count
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("mail caps", "two daemons on one database share a domain's cap (gmail.com and googlemail.com as one) and the total; a refusal queues nothing and counts nothing, the address's allowance included") { store in
            let a = try harness(store, domain: 3, total: 5, perAddress: 1)
            let b = try harness(store, domain: 3, total: 5, perAddress: 1)
            try expectContract(send(a, "one@gmail.com") == nil)
            try expectContract(send(b, "two@GoogleMail.com") == nil)
            try expectContract(send(a, "three@gmail.com") == nil)
            try expectContract(send(b, "four@gmail.com") == "TOO_MANY_ATTEMPTS_TRY_LATER")
            try expectContract(send(a, "x@example.org") == nil && send(b, "y@example.org") == nil)
            // The total (5) is reached: refused, and rolled back — z@'s one mail an hour is not spent.
            try expectContract(send(a, "z@example.net") == "TOO_MANY_ATTEMPTS_TRY_LATER")
            try expectContract(try queued(store) == 5)
            let open = try harness(store, domain: 0, total: 0, perAddress: 1)
            try expectContract(send(open, "z@example.net") == nil)
        },
        StoreContractCase("mail caps", "three daemons round robin against a total of 640 (slices of up to 20 where the store is shared): exactly 640 queued") { store in
            let daemons = try (0..<3).map { _ in try harness(store, domain: 0, total: 640) }
            var refused = 0
            for i in 0..<1_200 where send(daemons[i % 3], "r\(i)@example.org") != nil { refused += 1 }
            let total = try queued(store)
            try expectContract(total == 640, "queued \(total)")
            try expectContract(refused == 560)
        },
        StoreContractCase("mail caps", "a request its address's own limit refuses puts its cap back: the cap's 64 all go to others") { store in
            let h = try harness(store, domain: 0, total: 64, perAddress: 1)
            try expectContract(send(h, "again@example.org") == nil)
            for _ in 0..<5 { try expectContract(send(h, "again@example.org") == "TOO_MANY_ATTEMPTS_TRY_LATER") }
            for i in 0..<63 { try expectContract(send(h, "other\(i)@example.org") == nil, "other\(i)") }
            try expectContract(send(h, "one-more@example.org") == "TOO_MANY_ATTEMPTS_TRY_LATER")
            try expectContract(try queued(store) == 64)
        },
        StoreContractCase("mail caps", "30 concurrent requests for 30 addresses at one domain with a cap of 7: exactly 7 queued") { store in
            let h = try harness(store, domain: 7)
            let refused = Counter()
            DispatchQueue.concurrentPerform(iterations: 30) { i in
                if send(h, "user\(i)@example.org") == "TOO_MANY_ATTEMPTS_TRY_LATER" { refused.increment() }
            }
            try expectContract(try queued(store) == 7)
            try expectContract(refused.value == 23)
        },
    ]
}
