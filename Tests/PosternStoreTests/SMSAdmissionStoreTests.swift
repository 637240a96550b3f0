import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Synchronization
import Testing

/// The toll-fraud caps, attacker-style, on each store: what an SMS pumper would try.
@Suite("SMS admission: the toll-fraud caps, on each store")
struct SMSAdmissionStoreTests {
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
        func request(_ number: String, ip: String?, signedIn: Bool = true, via other: SMSAdmission? = nil) -> AuthError? {
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
            } catch {
                Issue.record("unexpected \(error)")
                return nil
            }
        }

        /// What `request` answers for a silenced SMS (the flows answer it as a send).
        static let silenced = AuthError(.rateLimited, code: .tooManyAttempts, message: "silenced", details: ["silenced": "yes"])

        var queued: Int { (try? store.read { try $0.smsMessages(state: nil, limit: 10_000) }.count) ?? -1 }
    }

    static func stores() throws -> [(String, any Store)] {
        var stores: [(String, any Store)] = [("memory", InMemoryStore())]
        for kind in StoreKind.available { stores.append((kind.rawValue, try OutboxFixture(kind).store)) }
        return stores
    }

    static func number(_ index: Int) -> String { "+4915100\(String(format: "%06d", index))" }

    @Test("many numbers from one IP: past the per-IP cap every number gets the same 429")
    func oneIPManyNumbers() throws {
        for (name, store) in try Self.stores() {
            let harness = try Harness(store) { $0.ipPerHour = 10 }
            for index in 0..<10 { #expect(harness.request(Self.number(index), ip: "203.0.113.7") == nil, "\(name) #\(index)") }
            let refused = (10..<20).map { harness.request(Self.number($0), ip: "203.0.113.7") }
            #expect(refused.allSatisfy { $0?.kind == .rateLimited && $0?.code == "TOO_MANY_ATTEMPTS_TRY_LATER" }, "\(name)")
            #expect(Set(refused.compactMap { $0 }).count == 1, "\(name): one answer for every number")
            #expect(Int(refused[0]?.details["retryAfter"] ?? "") ?? 0 > 3000)
            // A number used before and a fresh one get the very same answer.
            #expect(harness.request(Self.number(0), ip: "203.0.113.7") == refused[0], "\(name)")
            // Another IP is not held back, and a second daemon sees the same count.
            #expect(harness.request(Self.number(30), ip: "198.51.100.1") == nil, "\(name)")
            #expect(harness.request(Self.number(31), ip: "203.0.113.7", via: harness.secondDaemon { $0.ipPerHour = 10 }) == refused[0], "\(name)")
            #expect(harness.queued == 11, "\(name): a refused request queued nothing")
            #expect(harness.metrics.capSnapshot().first { $0.cap == "ip" }?.count == 11, "\(name)")
        }
    }

    @Test("one number from many IPs: the 60 s cooldown and 5 an hour hold whatever the IP, across daemons")
    func oneNumberManyIPs() throws {
        for (name, store) in try Self.stores() {
            let harness = try Harness(store)
            let target = Self.number(1)
            #expect(harness.request(target, ip: "10.0.0.1") == nil)
            // The number's own caps refuse nothing: they silence (the flows answer as a send).
            let cooldown = harness.request(target, ip: "10.0.0.2")
            #expect(cooldown == Harness.silenced, "\(name)")
            #expect(harness.request(target, ip: "10.0.0.3", via: harness.secondDaemon()) == cooldown, "\(name): the other daemon refuses too")
            for index in 2...5 {
                harness.clock.advance(by: 60)
                #expect(harness.request(target, ip: "10.0.0.\(index + 10)") == nil, "\(name) #\(index)")
            }
            harness.clock.advance(by: 60)
            let hourly = harness.request(target, ip: "10.0.1.1")
            #expect(hourly == Harness.silenced, "\(name): the 6th in an hour")
            #expect(harness.queued == 5, "\(name): nothing queued for the silenced ones")
            #expect(harness.lines.all.contains { $0.contains("sms not sent again") && $0.contains("+49") && !$0.contains("15100") })
            #expect(harness.request(Self.number(2), ip: "10.0.1.1") == nil, "\(name): another number is not held back")
            harness.clock.advance(by: 3600)
            #expect(harness.request(target, ip: "10.0.1.2") == nil, "\(name): the hour passed")
            let caps = Dictionary(uniqueKeysWithValues: harness.metrics.capSnapshot().map { ($0.cap, $0.count) })
            #expect(caps["number_cooldown"] == 1 && caps["number_hourly"] == 1, "\(name) \(caps)")
        }
    }

    @Test("attacker: 10 IPs of one network × 10 sends cannot close a country or the day for everyone: a network takes at most its share (10 %), another network still sends")
    func networkShares() throws {
        for (name, store) in try Self.stores() {
            // The defaults: 10 an hour per IP, 100 an hour for DE, a share of 10 % per network.
            let harness = try Harness(store)
            var accepted = 0
            for ip in 1...10 {
                for send in 0..<10 where harness.request(Self.number(ip * 100 + send), ip: "203.0.113.\(ip)") == nil { accepted += 1 }
            }
            #expect(accepted == 10, "\(name): the /24 took its share, \(accepted)")
            // DE is open for another network (a whole country was closed for 44 minutes before).
            #expect(harness.request(Self.number(9_001), ip: "198.51.100.1") == nil, "\(name)")
            #expect(harness.request("+14155552671", ip: "203.0.113.99") == nil, "\(name): a network's share is per country")
            // IPv6 clients are counted by /48: two /64s of one /48 share, another /48 does not.
            let v6 = try Harness(store) { $0.ipPerHour = 0 }
            var v6Accepted = 0
            for block in 0..<4 {
                for send in 0..<5 where v6.request(Self.number(50_000 + block * 10 + send), ip: "2001:db8:7:\(block)::/64") == nil { v6Accepted += 1 }
            }
            #expect(v6Accepted == 10, "\(name): one /48, \(v6Accepted)")
            #expect(v6.request(Self.number(59_999), ip: "2001:db8:8::/64") == nil, "\(name): another /48")
        }
    }

    @Test("the daily cap is shared out per network too")
    func dailyShare() throws {
        for (name, store) in try Self.stores() {
            let harness = try Harness(store) {
                $0.ipPerHour = 0
                $0.defaultCountryPerHour = 0
                $0.globalPerDay = 40
            }
            let accepted = (0..<10).filter { harness.request(Self.number($0), ip: "192.0.2.\($0)") == nil }.count
            #expect(accepted == 4, "\(name): 10 % of 40")
            #expect(harness.request(Self.number(99), ip: "198.51.100.7") == nil, "\(name)")
            // With the share off (0) one network may take it all, as before.
            let off = try Harness(store) {
                $0.ipPerHour = 0
                $0.defaultCountryPerHour = 0
                $0.globalPerDay = 40
                $0.networkSharePercent = 0
            }
            #expect((0..<10).filter { off.request(Self.number(200 + $0), ip: "192.0.2.\($0)") == nil }.count == 10, "\(name)")
        }
    }

    @Test("a country outside the allowlist (DE, US) is refused for every number, +1 876 and +1 809 too, and counts against nothing")
    func countryOutsideList() throws {
        for (name, store) in try Self.stores() {
            let harness = try Harness(store) { $0.ipPerHour = 2 }
            let refusals = ["+447400123456", "+447911123456", "+33612345678", "+18762101234", "+18092345678"].map { harness.request($0, ip: "10.9.9.9") }
            #expect(refusals.allSatisfy { $0 == .smsCountryNotAllowed }, "\(name)")
            #expect(harness.request(Self.number(1), ip: "10.9.9.9") == nil, "\(name): the refusals used none of the IP's budget")
            #expect(harness.queued == 1)
        }
    }

    @Test("a country's hourly budget: past it that country waits for the next hour, others do not")
    func countryBudget() throws {
        for (name, store) in try Self.stores() {
            let harness = try Harness(store) {
                $0.countryPerHour = ["DE": 3]
                $0.ipPerHour = 0
            }
            for index in 0..<3 { #expect(harness.request(Self.number(index), ip: "10.0.\(index).1") == nil, "\(name)") }
            let refused = harness.request(Self.number(9), ip: "10.0.9.1")
            #expect(refused?.kind == .rateLimited, "\(name)")
            #expect(harness.request("+14155552671", ip: "10.0.10.1") == nil, "\(name): US has its own budget")
            harness.clock.advance(by: 3600)
            #expect(harness.request(Self.number(9), ip: "10.0.9.1") == nil, "\(name): a new hour")
            #expect(harness.lines.all.contains { $0.contains("sms country budget reached") && $0.contains("DE") })
        }
    }

    @Test("the global daily cap: many numbers from many IPs stop at it, with a metric and a log line naming only the country code")
    func globalCap() throws {
        for (name, store) in try Self.stores() {
            let harness = try Harness(store) {
                $0.globalPerDay = 5
                $0.ipPerHour = 0
            }
            for index in 0..<5 {
                #expect(harness.request(index % 2 == 0 ? Self.number(index) : "+1415555\(2600 + index)", ip: "10.1.\(index).1") == nil, "\(name)")
            }
            let refused = (5..<8).map { harness.request(Self.number($0), ip: "10.2.\($0).1") }
            #expect(refused.allSatisfy { $0?.kind == .rateLimited }, "\(name)")
            #expect(Set(refused.compactMap { $0 }).count == 1, "\(name): the same answer for every number")
            #expect(harness.request(Self.number(20), ip: "10.3.0.1", via: harness.secondDaemon { $0.globalPerDay = 5 })?.kind == .rateLimited)
            #expect(harness.metrics.capSnapshot().first { $0.cap == "global_daily" }?.count == 3, "\(name)")
            let logged = harness.lines.all.filter { $0.contains("sms global daily cap reached") }
            #expect(logged.count == 1, "\(name): one line for the window, not one per refusal")
            #expect(logged.allSatisfy { $0.contains("+49") && !$0.contains("15100") }, "\(name): the country code, never the number")
            harness.clock.advance(by: 86_400)
            #expect(harness.request(Self.number(6), ip: "10.2.0.6") == nil, "\(name): the next day")
            for index in 0..<5 { _ = harness.request(Self.number(40 + index), ip: "10.4.\(index).1") }
            #expect(harness.lines.all.filter { $0.contains("sms global daily cap reached") }.count == 2, "\(name): the next day's hit logs again")
        }
    }

    @Test("without --phone-sign-in only a signed-in caller causes an SMS")
    func signedOut() throws {
        for (name, store) in try Self.stores() {
            let off = try Harness(store)
            #expect(off.request(Self.number(1), ip: "10.0.0.1", signedIn: false) == .invalidIDToken, "\(name)")
            #expect(off.request(Self.number(1), ip: "10.0.0.1", signedIn: true) == nil, "\(name): the refusal did not start the cooldown")
            let on = try Harness(store) { $0.phoneSignIn = true }
            #expect(on.request(Self.number(2), ip: "10.0.0.1", signedIn: false) == nil, "\(name)")
        }
    }

    @Test("the fixed-window counter: counts to the limit, then says when the next window starts")
    func countInWindow() throws {
        for (name, store) in try Self.stores() {
            let bucket: [UInt8] = Array(repeating: 1, count: 16)
            for _ in 0..<3 { #expect(try store.write { try $0.countInWindow(bucket: bucket, now: 7250, window: 3600, limit: 3) } == nil, "\(name)") }
            #expect(try store.write { try $0.countInWindow(bucket: bucket, now: 7260, window: 3600, limit: 3) } == 10_800 - 7260, "\(name)")
            #expect(try store.write { try $0.countInWindow(bucket: [2], now: 7260, window: 3600, limit: 3) } == nil, "\(name): buckets apart")
            #expect(try store.write { try $0.countInWindow(bucket: bucket, now: 10_800, window: 3600, limit: 3) } == nil, "\(name): reset in place")
        }
    }
}
