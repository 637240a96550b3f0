import Foundation
import PosternCore
import PosternCrypto
import Synchronization

/// The toll-fraud caps (``SMSAdmission``), attacker-style: what they count in the store holds for
/// every daemon on it.
enum SMSAdmissionContract {
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct Harness {
        let store: any Store
        let clock = ManualClock()
        let admission: SMSAdmission
        let metrics = SMSMetrics()
        let lines = Lines()
        let keys: KeyRingCache

        init(_ store: any Store, configure: (inout SMSConfiguration) -> Void = { _ in }) throws {
            self.store = store
            let vault = KeyVault(store: store, box: try SecretBox(key: Array(repeating: 7, count: 32)), clock: clock, maxCodeLifetime: 86_400)
            keys = try KeyRingCache(vault: vault, clock: clock)
            var config = SMSConfiguration(defaultRegion: "DE", countries: ["DE", "US"])
            configure(&config)
            let lines = self.lines
            admission = SMSAdmission(
                configuration: config, keys: keys, metrics: metrics, logger: Logger(label: "test", sink: { lines.append($0) }))
        }

        /// Another daemon on the same database: its own admission, the same caps.
        func secondDaemon(configure: (inout SMSConfiguration) -> Void = { _ in }) -> SMSAdmission {
            var config = SMSConfiguration(defaultRegion: "DE", countries: ["DE", "US"])
            configure(&config)
            return SMSAdmission(configuration: config, keys: keys)
        }

        var now: Int64 { clock.unixSeconds() }

        /// One request: admitted and queued in one write, or the refusal.
        /// - Throws: an error that is not an ``AuthError`` (the store's), which no case expects:
        ///   it fails the case.
        func request(_ number: String, ip: String?, signedIn: Bool = true, via other: SMSAdmission? = nil) throws -> AuthError? {
            let caller: SMSAdmission.Caller = signedIn ? .identified : .signedOut
            let admission = other ?? self.admission
            let now = self.now
            do {
                let parsed = try PhoneNumber.parse(number, defaultRegion: nil)
                let decision = try store.write { tx in
                    let decision = try admission.admit(parsed, clientIP: ip, caller: caller, now: now, tx: tx)
                    if decision == .send { _ = try tx.enqueueSMS(.test(reference: "t"), recipient: parsed, now: now, giveUpAt: now + 600) }
                    return decision
                }
                return decision == .send ? nil : Self.silenced
            } catch let error as AuthError {
                return error
            }
        }

        /// What `request` answers for a silenced SMS (the flows answer it as a send).
        static let silenced = AuthError(.rateLimited, code: .tooManyAttempts, message: "silenced", details: ["silenced": "yes"])

        var queued: Int { (try? store.read { try $0.smsMessages(state: nil, limit: 10_000) }.count) ?? -1 }
    }

    static func number(_ index: Int) -> String { "+4915100\(String(format: "%06d", index))" }

    static let cases: [StoreContractCase] = [
        StoreContractCase("smsAdmission", "many numbers from one IP: past the per-IP cap every number gets the same 429") { store in
            let harness = try Harness(store) { $0.ipPerHour = 10 }
            for index in 0..<10 { try expectContract(harness.request(number(index), ip: "203.0.113.7") == nil, "#\(index)") }
            let refused = try (10..<20).map { try harness.request(number($0), ip: "203.0.113.7") }
            try expectContract(refused.allSatisfy { $0?.kind == .rateLimited && $0?.code == "TOO_MANY_ATTEMPTS_TRY_LATER" })
            try expectContract(Set(refused.compactMap { $0 }).count == 1, "one answer for every number")
            try expectContract(Int(refused[0]?.details["retryAfter"] ?? "") ?? 0 > 3000)
            // A number used before and a fresh one get the very same answer.
            try expectContract(harness.request(number(0), ip: "203.0.113.7") == refused[0])
            // Another IP is not held back, and a second daemon sees the same count.
            try expectContract(harness.request(number(30), ip: "198.51.100.1") == nil)
            try expectContract(harness.request(number(31), ip: "203.0.113.7", via: harness.secondDaemon { $0.ipPerHour = 10 }) == refused[0])
            try expectContract(harness.queued == 11, "a refused request queued nothing")
            try expectContract(harness.metrics.capSnapshot().first { $0.cap == "ip" }?.count == 11)
        },
        StoreContractCase("smsAdmission", "one number from many IPs: the 60 s cooldown and 5 an hour hold whatever the IP, across daemons") { store in
            let harness = try Harness(store)
            let target = number(1)
            try expectContract(harness.request(target, ip: "10.0.0.1") == nil)
            // The number's own caps refuse nothing: they silence (the flows answer as a send).
            let cooldown = try harness.request(target, ip: "10.0.0.2")
            try expectContract(cooldown == Harness.silenced)
            try expectContract(harness.request(target, ip: "10.0.0.3", via: harness.secondDaemon()) == cooldown, "the other daemon refuses too")
            for index in 2...5 {
                harness.clock.advance(by: 60)
                try expectContract(harness.request(target, ip: "10.0.0.\(index + 10)") == nil, "#\(index)")
            }
            harness.clock.advance(by: 60)
            let hourly = try harness.request(target, ip: "10.0.1.1")
            try expectContract(hourly == Harness.silenced, "the 6th in an hour")
            try expectContract(harness.queued == 5, "nothing queued for the silenced ones")
            try expectContract(harness.lines.all.contains { $0.contains("sms not sent again") && $0.contains("+49") && !$0.contains("15100") })
            try expectContract(harness.request(number(2), ip: "10.0.1.1") == nil, "another number is not held back")
            harness.clock.advance(by: 3600)
            try expectContract(harness.request(target, ip: "10.0.1.2") == nil, "the hour passed")
            let caps = Dictionary(uniqueKeysWithValues: harness.metrics.capSnapshot().map { ($0.cap, $0.count) })
            try expectContract(caps["number_cooldown"] == 1 && caps["number_hourly"] == 1, "\(caps)")
        },
        StoreContractCase("smsAdmission", "attacker: 10 IPs of one network × 10 sends cannot close a country or the day for everyone: a network takes at most its share (10 %), another network still sends") { store in
            // The defaults: 10 an hour per IP, 100 an hour for DE, a share of 10 % per network.
            let harness = try Harness(store)
            var accepted = 0
            for ip in 1...10 {
                for send in 0..<10 where try harness.request(number(ip * 100 + send), ip: "203.0.113.\(ip)") == nil { accepted += 1 }
            }
            try expectContract(accepted == 10, "the /24 took its share, \(accepted)")
            // DE is open for another network (a whole country was closed for 44 minutes before).
            try expectContract(harness.request(number(9_001), ip: "198.51.100.1") == nil)
            try expectContract(harness.request("+14155552671", ip: "203.0.113.99") == nil, "a network's share is per country")
            // IPv6 clients are counted by /48: two /64s of one /48 share, another /48 does not.
            let v6 = try Harness(store) { $0.ipPerHour = 0 }
            var v6Accepted = 0
            for block in 0..<4 {
                for send in 0..<5 where try v6.request(number(50_000 + block * 10 + send), ip: "2001:db8:7:\(block)::/64") == nil { v6Accepted += 1 }
            }
            try expectContract(v6Accepted == 10, "one /48, \(v6Accepted)")
            try expectContract(v6.request(number(59_999), ip: "2001:db8:8::/64") == nil, "another /48")
        },
        StoreContractCase("smsAdmission", "the daily cap is shared out per network too") { store in
            let harness = try Harness(store) {
                $0.ipPerHour = 0
                $0.defaultCountryPerHour = 0
                $0.globalPerDay = 40
            }
            let accepted = try (0..<10).filter { try harness.request(number($0), ip: "192.0.2.\($0)") == nil }.count
            try expectContract(accepted == 4, "10 % of 40")
            try expectContract(harness.request(number(99), ip: "198.51.100.7") == nil)
            // With the share off (0) one network may take it all, as before.
            let off = try Harness(store) {
                $0.ipPerHour = 0
                $0.defaultCountryPerHour = 0
                $0.globalPerDay = 40
                $0.networkSharePercent = 0
            }
            try expectContract((0..<10).filter { try off.request(number(200 + $0), ip: "192.0.2.\($0)") == nil }.count == 10)
        },
        StoreContractCase("smsAdmission", "a country outside the allowlist (DE, US) is refused for every number, +1 876 and +1 809 too, and counts against nothing") { store in
            let harness = try Harness(store) { $0.ipPerHour = 2 }
            let refusals = try ["+447400123456", "+447911123456", "+33612345678", "+18762101234", "+18092345678"].map { try harness.request($0, ip: "10.9.9.9") }
            try expectContract(refusals.allSatisfy { $0 == .smsCountryNotAllowed })
            try expectContract(harness.request(number(1), ip: "10.9.9.9") == nil, "the refusals used none of the IP's budget")
            try expectContract(harness.queued == 1)
        },
        StoreContractCase("smsAdmission", "a country's hourly budget: past it that country waits for the next hour, others do not") { store in
            let harness = try Harness(store) {
                $0.countryPerHour = ["DE": 3]
                $0.ipPerHour = 0
            }
            for index in 0..<3 { try expectContract(harness.request(number(index), ip: "10.0.\(index).1") == nil) }
            let refused = try harness.request(number(9), ip: "10.0.9.1")
            try expectContract(refused?.kind == .rateLimited)
            try expectContract(harness.request("+14155552671", ip: "10.0.10.1") == nil, "US has its own budget")
            harness.clock.advance(by: 3600)
            try expectContract(harness.request(number(9), ip: "10.0.9.1") == nil, "a new hour")
            try expectContract(harness.lines.all.contains { $0.contains("sms country budget reached") && $0.contains("DE") })
        },
        StoreContractCase("smsAdmission", "the global daily cap: many numbers from many IPs stop at it, with a metric and a log line naming only the country code") { store in
            let harness = try Harness(store) {
                $0.globalPerDay = 5
                $0.ipPerHour = 0
            }
            for index in 0..<5 {
                try expectContract(harness.request(index % 2 == 0 ? number(index) : "+1415555\(2600 + index)", ip: "10.1.\(index).1") == nil)
            }
            let refused = try (5..<8).map { try harness.request(number($0), ip: "10.2.\($0).1") }
            try expectContract(refused.allSatisfy { $0?.kind == .rateLimited })
            try expectContract(Set(refused.compactMap { $0 }).count == 1, "the same answer for every number")
            try expectContract(harness.request(number(20), ip: "10.3.0.1", via: harness.secondDaemon { $0.globalPerDay = 5 })?.kind == .rateLimited)
            try expectContract(harness.metrics.capSnapshot().first { $0.cap == "global_daily" }?.count == 3)
            let logged = harness.lines.all.filter { $0.contains("sms global daily cap reached") }
            try expectContract(logged.count == 1, "one line for the window, not one per refusal")
            try expectContract(logged.allSatisfy { $0.contains("+49") && !$0.contains("15100") }, "the country code, never the number")
            harness.clock.advance(by: 86_400)
            try expectContract(harness.request(number(6), ip: "10.2.0.6") == nil, "the next day")
            for index in 0..<5 { _ = try harness.request(number(40 + index), ip: "10.4.\(index).1") }
            try expectContract(harness.lines.all.filter { $0.contains("sms global daily cap reached") }.count == 2, "the next day's hit logs again")
        },
        StoreContractCase("smsAdmission", "without --phone-sign-in only a signed-in caller causes an SMS") { store in
            let off = try Harness(store)
            try expectContract(off.request(number(1), ip: "10.0.0.1", signedIn: false) == .invalidIDToken)
            try expectContract(off.request(number(1), ip: "10.0.0.1", signedIn: true) == nil, "the refusal did not start the cooldown")
            let on = try Harness(store) { $0.phoneSignIn = true }
            try expectContract(on.request(number(2), ip: "10.0.0.1", signedIn: false) == nil)
        },
    ]
}
