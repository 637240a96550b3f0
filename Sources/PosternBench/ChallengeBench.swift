import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport

/// `postern-bench challenge KEY DIFFICULTY COUNT SECONDS PAYLOADS`: the proof of work's cost on
/// the server's side, for `bench/challenge`.
///
/// Mints COUNT challenges of DIFFICULTY under the HMAC key KEY (its UTF-8 bytes, as ALTCHA's
/// libraries take a key), solves each by brute force (the work a client does, here in Swift),
/// writes the solved payloads (ALTCHA's base64 JSON, one a line) to PAYLOADS for the reference
/// verifier, checks every payload verifies, then verifies them round-robin for SECONDS with
/// `ProofOfWork.verify`. Prints one line:
/// `swift verify_per_s=… verify_us=… parse_us=… swift_solve_ms=… count=… difficulty=…` (parse_us: the
/// payload's base64 and JSON decoding alone, the part of verify that is not hashing; swift_solve_ms: the median).
enum ChallengeBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ arguments: ArraySlice<String>) throws {
        let values = Array(arguments)
        guard values.count == 5, let difficulty = Int64(values[1]), difficulty > 0, let count = Int(values[2]), count > 0,
            let seconds = Double(values[3]), seconds > 0
        else {
            throw Failure(description: "usage: postern-bench challenge KEY DIFFICULTY COUNT SECONDS PAYLOADS")
        }
        let proof = ProofOfWork(key: try HMACKey(key: Array(values[0].utf8)), difficulty: difficulty, lifetime: 3600)
        let now = Int64(Date().timeIntervalSince1970)
        let clock = ContinuousClock()
        var payloads: [String] = []
        var solveMillis: [Double] = []
        for _ in 0..<count {
            let challenge = try proof.mint(now: now)
            let started = clock.now
            guard let number = ProofOfWorkSolver.solve(challenge) else { throw Failure(description: "a challenge has no solution up to its maxnumber") }
            solveMillis.append(milliseconds(clock.now - started))
            let fields: [String: Any] = [
                "algorithm": challenge.algorithm, "challenge": challenge.challenge, "number": number,
                "salt": challenge.salt, "signature": challenge.signature,
            ]
            payloads.append(try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]).base64EncodedString())
        }
        do {
            try (payloads.joined(separator: "\n") + "\n").write(toFile: values[4], atomically: true, encoding: .utf8)
        } catch {
            throw Failure(description: "cannot write \(values[4])")
        }
        for payload in payloads {
            do {
                _ = try proof.verify(payload, now: now)
            } catch {
                throw Failure(description: "a solved payload was refused: \(error)")
            }
        }

        var index = 0
        var accepted = 0
        let perSecond = try measure(seconds: seconds) {
            do {
                accepted &+= try proof.verify(payloads[index % payloads.count], now: now).onceKey.count
            } catch {
                throw Failure(description: "a solved payload was refused: \(error)")
            }
            index &+= 1
        }
        // The payload's decoding alone (base64, then Foundation's JSON), the part of verify that is not hashing.
        var fieldCount = 0
        let parsesPerSecond = try measure(seconds: seconds) {
            guard let data = Data(base64Encoded: payloads[index % payloads.count]),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { throw Failure(description: "a payload did not decode") }
            fieldCount &+= object.count
            index &+= 1
        }
        solveMillis.sort()
        let median = solveMillis[solveMillis.count / 2]
        print(
            "swift verify_per_s=\(Int(perSecond)) verify_us=\(String(format: "%.2f", 1e6 / perSecond))"
                + " parse_us=\(String(format: "%.2f", 1e6 / parsesPerSecond))"
                + " swift_solve_ms=\(String(format: "%.1f", median)) count=\(count) difficulty=\(difficulty) sink=\((accepted &+ fieldCount) & 1)")
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) * 1e3 + Double(parts.attoseconds) / 1e15
    }
}
