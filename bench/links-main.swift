// Benchmark driver for the pasted-link parser, built by bench/links together with the parser's
// sources; not part of the package.
//
//   links-bench INPUTS SECONDS
//
// INPUTS has one case a line, `oobCode<TAB>pasted text` (newlines in the text written as \n).
// Checks every case parses to its code, then parses them round-robin for SECONDS (five rounds)
// and prints `swift pastes=… seconds=… mean_per_s=… per_s=…` (per_s: the best round).
import Foundation

@main
struct LinksBench {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let seconds = Double(arguments[2]),
              let content = try? String(contentsOfFile: arguments[1], encoding: .utf8)
        else {
            FileHandle.standardError.write(Data("usage: links-bench INPUTS SECONDS\n".utf8))
            exit(64)
        }
        var cases = [(code: String, text: String)]()
        for line in content.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2 else { continue }
            cases.append((String(parts[0]), parts[1].replacingOccurrences(of: "\\n", with: "\n")))
        }
        guard !cases.isEmpty,
              let policy = try? LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["app.example.com"])
        else {
            FileHandle.standardError.write(Data("links-bench: no cases or bad policy\n".utf8))
            exit(65)
        }
        let parser = PastedLinkParser(policy: policy)
        for (index, item) in cases.enumerated() {
            guard case .link(let link)? = try? parser.parse(item.text), link.oobCode == item.code else {
                FileHandle.standardError.write(Data("links-bench: case \(index) did not parse to its code\n".utf8))
                exit(1)
            }
        }

        // Five equal rounds; the best round is reported beside the overall rate, since on shared
        // cores the slower rounds measure the neighbours more than the parser.
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
            let roundSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            pastes += roundPastes
            total += roundSeconds
            best = max(best, Double(roundPastes) / roundSeconds)
        }
        print("swift pastes=\(pastes) seconds=\(String(format: "%.3f", total)) mean_per_s=\(Int(Double(pastes) / total)) per_s=\(Int(best)) checksum=\(checksum)")
    }
}
