import Foundation
import PosternCore

/// `postern-bench links INPUTS SECONDS`: pasted-link parser throughput, for `bench/links`.
///
/// INPUTS has one case a line, `oobCode<TAB>pasted text` (newlines in the text written as `\n`).
/// Checks every case parses to its code, then parses them round-robin for SECONDS in five equal
/// rounds, and measures linear time over adversarial texts. Prints one line:
/// `swift pastes=… seconds=… mean_per_s=… per_s=… checksum=… linear_worst_ratio=… linear_worst_case=… max_1mib_ms=…`
/// (per_s: the best round; on shared cores the slower rounds measure the neighbours more than the parser).
enum LinksBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ arguments: ArraySlice<String>) throws {
        guard arguments.count == 2, let path = arguments.first, let seconds = arguments.last.flatMap(Double.init), seconds > 0 else {
            throw Failure(description: "usage: postern-bench links INPUTS SECONDS")
        }
        let content: String
        do {
            content = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw Failure(description: "cannot read \(path)")
        }
        var cases = [(code: String, text: String)]()
        for line in content.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2 else { continue }
            cases.append((String(parts[0]), parts[1].replacingOccurrences(of: "\\n", with: "\n")))
        }
        guard !cases.isEmpty else { throw Failure(description: "no cases in \(path)") }
        let parser = PastedLinkParser(policy: try LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["app.example.com"]))
        for (index, item) in cases.enumerated() {
            guard case .link(let link)? = try? parser.parse(item.text), link.oobCode == item.code else {
                throw Failure(description: "case \(index) did not parse to its code")
            }
        }

        let clock = ContinuousClock()
        let rounds = 5
        let limit = Duration.milliseconds(Int64(seconds * 1000 / Double(rounds)))
        var pastes = 0
        var total = 0.0
        var best = 0.0
        var checksum = 0
        for _ in 0..<rounds {
            var roundPastes = 0
            let start = clock.now
            var elapsed = Duration.zero
            repeat {
                for item in cases {
                    if case .link(let link)? = try? parser.parse(item.text) {
                        checksum &+= link.oobCode.utf8.count
                    }
                }
                roundPastes += cases.count
                elapsed = clock.now - start
            } while elapsed < limit
            let roundSeconds = Self.seconds(elapsed)
            pastes += roundPastes
            total += roundSeconds
            best = max(best, Double(roundPastes) / roundSeconds)
        }
        let worst = linearity(parser)
        print(
            "swift pastes=\(pastes) seconds=\(String(format: "%.3f", total)) mean_per_s=\(Int(Double(pastes) / total)) per_s=\(Int(best))",
            "checksum=\(checksum) linear_worst_ratio=\(String(format: "%.2f", worst.ratio)) linear_worst_case=\(worst.name)",
            "max_1mib_ms=\(String(format: "%.1f", worst.slowest * 1000))")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Texts built to hit every loop of the parser as hard as possible, alone and after prefixes
    /// that put them inside a link or a gateway rewrite.
    static let adversarialUnits: [(String, String)] = [
        ("scheme-starts", "https://"), ("unclosed-angle-links", "<https://a "), ("angle-links", "<https://a"),
        ("url-labels", "<URL:http://"), ("entities", "&amp;"), ("numeric-entities", "&#x00000"),
        ("qp-escapes", "=3D"), ("soft-breaks", "a=\n"), ("equals-blanks", "=               "), ("percent", "%25"),
        ("brackets", "(]"), ("punctuation", ".,;:!?"), ("javascript", "javascript:"), ("at-signs", "@\\"),
        ("v3-stars", "**A*"), ("parameters", "&mode=signIn&oobCode=x"),
    ]
    static let prefixes = [
        "", "https://auth.example.com/action?mode=signIn&oobCode=", "https://nam12.safelinks.protection.outlook.com/?url=",
        "https://urldefense.com/v3/__https://auth.example.com/action",
    ]

    /// Linear time, measured: the worst ratio of parse time at 1 MiB to parse time at 256 KiB over
    /// every adversarial text (linear is 4, quadratic 16), and the slowest 1 MiB parse.
    static func linearity(_ parser: PastedLinkParser) -> (ratio: Double, name: String, slowest: Double) {
        func bestOfThree(_ text: String) -> Double {
            let clock = ContinuousClock()
            var best = Double.infinity
            for _ in 0..<3 {
                let start = clock.now
                _ = try? parser.parse(text)
                best = min(best, seconds(clock.now - start))
            }
            return best
        }
        func text(_ prefix: String, _ unit: String, bytes: Int) -> String {
            prefix + String(repeating: unit, count: (bytes - prefix.utf8.count) / unit.utf8.count)
        }
        var worst = (ratio: 0.0, name: "", slowest: 0.0)
        for (index, prefix) in prefixes.enumerated() {
            for (name, unit) in adversarialUnits {
                let small = bestOfThree(text(prefix, unit, bytes: PastedLinkParser.maximumInputBytes / 4))
                let large = bestOfThree(text(prefix, unit, bytes: PastedLinkParser.maximumInputBytes))
                let ratio = large / max(small, 1e-4)
                if ratio > worst.ratio { worst = (ratio, "\(name)@\(index)", worst.slowest) }
                worst.slowest = max(worst.slowest, large)
            }
        }
        return worst
    }
}
