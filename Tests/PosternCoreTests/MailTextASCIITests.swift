@testable import PosternCore
import Testing

/// The byte-level paths a mail's locale and subject take when they are ASCII, against the general
/// Character and scalar paths they replace for that input.
@Suite("Mail text: the ASCII fast paths")
struct MailTextASCIITests {
    /// A random string of `pieces`, up to `length` of them.
    static func random(_ pieces: [String], length: Int, using generator: inout SeededRandom) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...length, using: &generator) { text += pieces.randomElement(using: &generator)! }
        return text
    }

    @Test("a locale tag of ASCII is normalized on its bytes exactly as Character by Character")
    func localeAgreesWithGeneralPath() {
        let pieces = [
            "de", "DE", "at", "pt", "BR", "zh", "Hant", "tw", "x", "abcdefghi", "12345678", "123456789", "-", "--", "_", ".", "@",
            "UTF-8", "euro", " ", "\t", "\r", "\n", "\r\n", "\u{0B}", "\u{0C}", "\u{1C}", "\u{1F}", "\u{7F}", "\0", "../", "/", "a", "Z", "9",
        ]
        var generator = SeededRandom(seed: 0x10CA_1E)
        var valid = 0
        for _ in 0..<30_000 {
            let tag = Self.random(pieces, length: 6, using: &generator)
            let fast = MailLocale.asciiNormalized(tag)
            #expect(fast == MailLocale.generalNormalized(tag), "\(tag.debugDescription)")
            if fast != nil { valid += 1 }
        }
        // Tags accepted and refused were both compared.
        #expect(valid > 1_000)
        #expect(MailLocale.normalized("  Fr_CA.UTF-8\r\n") == "fr-ca")
        #expect(MailLocale.normalized("de\u{A0}") == "de", "a non-ASCII space takes the general path and is trimmed")
    }

    @Test("an ASCII subject is made one line on its bytes exactly as scalar by scalar")
    func subjectAgreesWithScalarPath() throws {
        let pieces = ["Sign", "in", "to", "Postern", " ", "  ", "\t", "\n", "\r\n", "\r", "\u{0B}", "\u{1C}", "\u{1F}", "\u{7F}", "\0", "!", "~", "123456", ":"]
        var generator = SeededRandom(seed: 0x5B1E_C7)
        for _ in 0..<30_000 {
            let subject = Self.random(pieces, length: 8, using: &generator)
            let fast = try #require(CompiledTemplate<MailVariable>.asciiSingleLine(subject))
            #expect(fast == CompiledTemplate<MailVariable>.scalarSingleLine(subject), "\(subject.debugDescription)")
        }
        #expect(CompiledTemplate<MailVariable>.asciiSingleLine("Anmeldung für Postern") == nil)
        #expect(CompiledTemplate<MailVariable>.singleLine("  Anmeldung\u{2028}für\u{A0} Postern ") == "Anmeldung für Postern")
    }

    @Test("control characters become spaces, whether the value is printable ASCII or not")
    func controlCharacters() {
        #expect(ControlCharacters.replacedBySpaces("Jane Doe") == "Jane Doe")
        #expect(ControlCharacters.replacedBySpaces("Jane\r\nBcc: x\u{7F}") == "Jane  Bcc: x ")
        #expect(ControlCharacters.replacedBySpaces("Jürgen\u{85}\u{2028}") == "Jürgen  ")
    }
}
