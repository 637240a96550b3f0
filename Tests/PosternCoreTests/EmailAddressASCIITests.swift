@testable import PosternCore
import Testing

@Suite("Email addresses: the ASCII fast path")
struct EmailAddressASCIITests {
    /// What a parser made of `input`: the address's parts, or the reason it was refused.
    func outcome(_ parse: (String) throws(EmailAddressError) -> EmailAddress?, _ input: String) -> String? {
        do {
            guard let address = try parse(input) else { return nil }
            return "ok \(address.localPart) \(address.domain)"
        } catch {
            return "refused \(error.reason)"
        }
    }

    @Test("for ASCII input the fast path answers exactly as the general parser does")
    func agreesWithGeneralParser() {
        let pieces = [
            "a", "Z", "0", "9", ".", "..", "-", "_", "+", "@", "@@", "<", ">", " ", "\t", ",", ";", ":", "\"", "[", "]", "(",
            "!", "#", "xn--", "example", "com", "EXAMPLE", "1", "\r", "\n", "\u{7F}", "=", "~", "local", "é",
            String(repeating: "a", count: 63), String(repeating: "b", count: 65),
        ]
        var generator = SeededRandom(seed: 20_261_130)
        var fastAnswered = 0
        for round in 0..<30_000 {
            var input = ""
            if round % 3 == 0 {
                // Shaped like an address, with noise on either side of the @.
                for _ in 0..<Int.random(in: 0...3, using: &generator) { input += pieces.randomElement(using: &generator)! }
                input += "@"
                for _ in 0..<Int.random(in: 0...4, using: &generator) { input += pieces.randomElement(using: &generator)! }
                if Bool.random(using: &generator) { input += ".com" }
            } else {
                for _ in 0..<Int.random(in: 0...8, using: &generator) { input += pieces.randomElement(using: &generator)! }
            }
            let general = outcome({ (text: String) throws(EmailAddressError) -> EmailAddress? in try EmailAddress.parseUnicode(text) }, input)
            guard let fast = outcome(EmailAddress.parseASCII, input) else {
                #expect(!input.utf8.allSatisfy { $0 < 0x80 } || input.trimmingPrefix(while: { $0 == " " || $0 == "\t" }).first == "\"",
                        "the fast path declined \(input.debugDescription)")
                continue
            }
            fastAnswered += 1
            #expect(fast == general, "\(input.debugDescription): fast \(fast), general \(general ?? "nil")")
        }
        // Both accepted and refused inputs were compared.
        #expect(fastAnswered > 15_000)
    }

    @Test("the fast path takes plain addresses and leaves quoted and non-ASCII ones to the general parser")
    func declines() throws {
        #expect(try EmailAddress.parseASCII("  Jane.Doe+tag@Example.COM ")?.address == "Jane.Doe+tag@example.com")
        #expect(try EmailAddress.parseASCII("\"jane doe\"@example.com") == nil)
        #expect(try EmailAddress.parseASCII("jane@bücher.example") == nil)
        #expect(try EmailAddress.parse("jane@bücher.example").domain == "xn--bcher-kva.example")
    }
}
