import Foundation
import PosternCrypto
import Synchronization

/// Makes every password check take as long as a typical check of the slowest scheme seen, so
/// that an account holding an imported hash (Firebase scrypt, bcrypt: other costs than Postern's
/// scrypt) cannot be told by timing from an account with Postern's hash, nor from an unknown
/// address (checked against a dummy of Postern's). Until every imported user has signed in once
/// and been rehashed, that is what keeps password sign-in from answering "does this address have
/// an account".
///
/// Each scheme's typical time is an exponential moving average of its checks, so one slow check
/// (a loaded machine) moves the target only a little. A scheme's first check in a process is
/// not padded to itself: it can be slower than the target once.
///
/// A hash costing more than `bound` (more than the service's own check) neither sets nor waits
/// for the target: otherwise one stored bcrypt 16 or 1 GiB scrypt hash would make every password
/// sign-in of every address last its 2.8 s. The import refuses such hashes; one stored before
/// still verifies for its own account (slowly: that address's time is its own), is replaced by
/// the service's hash at its first sign-in, and is never the calibration sample.
final class PasswordCheckPacer: Sendable {
    /// The weight of the newest check in a scheme's average.
    static let weight = 0.125

    /// Hashes costing more than this are left out of the timing.
    let bound: PasswordCostBound
    private let clock: any MonotonicClock
    private let pause: @Sendable (Duration) -> Void
    private let typical = Mutex<[String: Double]>([:])
    private let calibrated = Atomic<Bool>(false)

    /// A pacer timing checks of hashes within `bound` on `clock` and waiting with `pause`.
    init(
        bound: PasswordCostBound = .standard, clock: any MonotonicClock = SystemMonotonicClock(),
        pause: @escaping @Sendable (Duration) -> Void = PasswordCheckPacer.sleep
    ) {
        self.bound = bound
        self.clock = clock
        self.pause = pause
    }

    /// Runs `check` of a hash in `scheme`, then waits until it has taken the target. A check of a
    /// hash above the bound (`withinBound` false) is padded to the target like any other, but its
    /// own time moves no average.
    func paced(scheme: PasswordScheme?, withinBound: Bool = true, _ check: () -> Bool) -> Bool {
        let started = clock.now()
        let result = check()
        let took = Self.seconds(clock.now() - started)
        let target: Double = typical.withLock { averages in
            guard withinBound else { return averages.values.max() ?? 0 }
            let key = scheme?.rawValue ?? "unknown"
            averages[key] = averages[key].map { $0 + Self.weight * (took - $0) } ?? took
            return averages.values.max() ?? took
        }
        if took < target { pause(.nanoseconds(Int64((target - took) * 1e9))) }
        return result
    }

    /// Times one check of each imported scheme the store holds (a wrong password against a stored
    /// hash: nothing is learnt or changed), so that even the first check of such an account after
    /// a start takes no longer than an unknown address's. Failures are ignored: the pacer then
    /// learns the scheme's time from its first real check.
    /// The first call does the work; later calls return at once.
    func calibrate(store: any Store, verify: (String) -> Void) {
        guard calibrated.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        for (scheme, marker) in PasswordScheme.importedMarkers {
            guard let sample = (try? store.read { try $0.passwordHashSample(prefix: marker) }) ?? nil, bound.allows(sample) else {
                continue
            }
            _ = paced(scheme: scheme) {
                verify(sample)
                return false
            }
        }
    }

    /// The typical seconds of each scheme's check so far (for tests).
    var averages: [String: Double] { typical.withLock { $0 } }

    @Sendable static func sleep(_ duration: Duration) {
        Thread.sleep(forTimeInterval: seconds(duration))
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
