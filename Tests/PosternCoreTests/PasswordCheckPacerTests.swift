import Foundation
import PosternCrypto
import PosternTestSupport
import Synchronization
import Testing
@testable import PosternCore

@Suite("password checks take the slowest scheme's time")
struct PasswordCheckPacerTests {
    /// A pacer on a manual clock whose pauses move the clock.
    final class Rig: Sendable {
        let clock: ManualMonotonicClock
        let pacer: PasswordCheckPacer

        init() {
            let clock = ManualMonotonicClock()
            self.clock = clock
            pacer = PasswordCheckPacer(clock: clock) { duration in clock.advance(by: duration) }
        }

        /// A check of `scheme` that takes `milliseconds`; returns how long the paced call took.
        /// `withinBound` false: a stored hash costing more than the service's own.
        func check(_ scheme: PasswordScheme?, taking milliseconds: Int64, withinBound: Bool = true) -> Duration {
            let started = clock.now()
            _ = pacer.paced(scheme: scheme, withinBound: withinBound) {
                clock.advance(by: .milliseconds(milliseconds))
                return false
            }
            return clock.now() - started
        }
    }

    @Test("once a slow scheme has been checked, every other check lasts as long")
    func padsToTheSlowest() {
        let rig = Rig()
        #expect(rig.check(.scrypt, taking: 10) == .milliseconds(10))
        #expect(rig.check(nil, taking: 10) == .milliseconds(10))
        // An imported bcrypt hash costs 50 ms: its first check is not padded to itself.
        #expect(rig.check(.bcrypt, taking: 50) == .milliseconds(50))
        // From now on Postern's hash, the dummy of an unknown address and bcrypt all last 50 ms.
        let scrypt = rig.check(.scrypt, taking: 10)
        let unknown = rig.check(nil, taking: 10)
        let bcrypt = rig.check(.bcrypt, taking: 50)
        #expect(abs((scrypt - .milliseconds(50)) / .milliseconds(1)) < 1)
        #expect(abs((unknown - .milliseconds(50)) / .milliseconds(1)) < 1)
        #expect(bcrypt == .milliseconds(50))
    }

    @Test("a scheme faster than Postern's is padded up to it")
    func fasterImportIsPadded() {
        let rig = Rig()
        _ = rig.check(.scrypt, taking: 40)
        let firebase = rig.check(.firebaseScrypt, taking: 15)
        #expect(abs((firebase - .milliseconds(40)) / .milliseconds(1)) < 1)
    }

    @Test("one slow check moves the target by an eighth, not to itself")
    func outliersAreDamped() {
        let rig = Rig()
        for _ in 0..<10 { _ = rig.check(.scrypt, taking: 10) }
        _ = rig.check(.scrypt, taking: 810)
        let average = rig.pacer.averages["scrypt"] ?? 0
        #expect(abs(average - 0.110) < 0.001, "10 ms + (810 - 10) / 8 = 110 ms, got \(average)")
        #expect(abs((rig.check(nil, taking: 10) - .milliseconds(110)) / .milliseconds(1)) < 1)
    }

    /// A store holding one account whose hash is bcrypt at `cost`.
    static func store(bcryptCost cost: String) throws -> (InMemoryStore, hash: String) {
        let store = InMemoryStore()
        let hash = "$2b$\(cost)$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234"
        let account = Account(uid: "imported", email: try EmailAddress.parse("i@example.com"), passwordHash: hash, createdAt: 0)
        try store.write { try $0.insertAccount(account) }
        return (store, hash)
    }

    @Test("calibration times each imported scheme the store holds, once, so even the first check is padded")
    func calibration() throws {
        let rig = Rig()
        let (store, hash) = try Self.store(bcryptCost: "10")
        let clock = rig.clock
        let checked = Mutex<[String]>([])
        let calibrate = {
            rig.pacer.calibrate(store: store) { sample in
                checked.withLock { $0.append(sample) }
                clock.advance(by: .milliseconds(60))
            }
        }
        calibrate()
        calibrate()
        #expect(checked.withLock { $0 } == [hash], "one sample, timed once")
        // The first unknown address's check already lasts as long as a bcrypt one.
        #expect(abs((rig.check(nil, taking: 10) - .milliseconds(60)) / .milliseconds(1)) < 1)
    }

    @Test("a store without imported hashes calibrates nothing")
    func nothingToCalibrate() {
        let rig = Rig()
        rig.pacer.calibrate(store: InMemoryStore()) { _ in Issue.record("nothing to time") }
        #expect(rig.check(nil, taking: 10) == .milliseconds(10))
    }

    @Test("attack: a stored hash above the cost bound (bcrypt 16: 2.8 s) drags no other check; its own is not padded either")
    func aboveTheBoundDragsNobody() {
        let rig = Rig()
        #expect(rig.check(.scrypt, taking: 10) == .milliseconds(10))
        #expect(rig.check(.bcrypt, taking: 2_800, withinBound: false) == .milliseconds(2_800))
        #expect(rig.check(nil, taking: 10) == .milliseconds(10))
        #expect(rig.check(.scrypt, taking: 10) == .milliseconds(10))
        #expect(rig.pacer.averages["bcrypt"] == nil)
        // A check above the bound that happens to be quick still lasts the usual time.
        #expect(abs((rig.check(.bcrypt, taking: 1, withinBound: false) - .milliseconds(10)) / .milliseconds(1)) < 1)
    }

    @Test("calibration skips a sample above the cost bound")
    func calibrationSkipsCostlyHashes() throws {
        let rig = Rig()
        let (store, _) = try Self.store(bcryptCost: "16")
        rig.pacer.calibrate(store: store) { _ in Issue.record("a hash above the bound was timed") }
        #expect(rig.check(nil, taking: 10) == .milliseconds(10))
    }
}
