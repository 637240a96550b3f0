import PosternCore
import Testing

@Suite("Pasted-link parser time")
struct LinkParserTimeTests {
    /// Texts built to hit every loop of the parser as hard as possible: repeated starts of links,
    /// of escapes, of brackets, of gateway prefixes.
    static let adversarialUnits: [(String, String)] = [
        ("scheme starts", "https://"),
        ("unclosed angle links", "<https://a "),
        ("angle links without a space", "<https://a"),
        ("url labels", "<URL:http://"),
        ("entities", "&amp;"),
        ("numeric entities", "&#x00000"),
        ("quoted-printable escapes", "=3D"),
        ("soft breaks", "a=\n"),
        ("equals blanks", "=               "),
        ("percent signs", "%25"),
        ("brackets", "(]"),
        ("punctuation", ".,;:!?"),
        ("javascript", "javascript:"),
        ("at signs", "@\\"),
        ("v3 stars", "**A*"),
        ("parameters", "&mode=signIn&oobCode=x"),
    ]

    /// Prefixes that put the units inside a link or a gateway rewrite.
    static let prefixes = [
        "",
        "https://auth.example.com/action?mode=signIn&oobCode=",
        "https://nam12.safelinks.protection.outlook.com/?url=",
        "https://urldefense.com/v3/__https://auth.example.com/action",
    ]

    private func seconds(_ parser: PastedLinkParser, _ text: String) -> Double {
        var best = Double.infinity
        for _ in 0..<2 {
            let clock = ContinuousClock()
            let start = clock.now
            _ = try? parser.parse(text)
            let elapsed = clock.now - start
            best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return best
    }

    private func text(_ prefix: String, _ unit: String, bytes: Int) -> String {
        let count = (bytes - prefix.utf8.count) / unit.utf8.count
        return prefix + String(repeating: unit, count: count)
    }

    @Test("time grows linearly with the text: 4 times the text takes well under 16 times as long")
    func linearTime() throws {
        let parser = PastedLinkParser(policy: try LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["app.example.com"]))
        for prefix in Self.prefixes {
            for (name, unit) in Self.adversarialUnits {
                // 64 KiB against 256 KiB keeps the suite quick in debug builds; the shape is what counts.
                let small = seconds(parser, text(prefix, unit, bytes: PastedLinkParser.maximumInputBytes / 16))
                let large = seconds(parser, text(prefix, unit, bytes: PastedLinkParser.maximumInputBytes / 4))
                // Linear is 4x, quadratic 16x; the 5 ms floor absorbs timer noise on a shared machine.
                #expect(large < max(small, 0.005) * 9, "\(name) after '\(prefix)': \(small) s for 64 KiB, \(large) s for 256 KiB")
                #expect(large < 1.0, "\(name) after '\(prefix)': \(large) s for 256 KiB")
            }
        }
    }
}
