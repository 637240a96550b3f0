import PosternCore
import Testing

@Suite("Email addresses")
struct EmailAddressTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        let input: String, address: String, normalized: String
        var testDescription: String { input.debugDescription }
    }

    static let accepted: [Accepted] = [
        .init(input: "alice@example.com", address: "alice@example.com", normalized: "alice@example.com"),
        .init(input: "  Alice.Smith@Example.COM\t", address: "Alice.Smith@example.com", normalized: "alice.smith@example.com"),
        .init(input: "user+tag@sub.example.co.uk", address: "user+tag@sub.example.co.uk", normalized: "user+tag@sub.example.co.uk"),
        .init(input: "jürgen@bücher.de".replacingOccurrences(of: "jürgen", with: "juergen"),
              address: "juergen@xn--bcher-kva.de", normalized: "juergen@xn--bcher-kva.de"),
        .init(input: "info@BÜCHER.de", address: "info@xn--bcher-kva.de", normalized: "info@xn--bcher-kva.de"),
        .init(input: "x@例え.テスト", address: "x@xn--r8jz45g.xn--zckzah", normalized: "x@xn--r8jz45g.xn--zckzah"),
        .init(input: "x@münchen。de", address: "x@xn--mnchen-3ya.de", normalized: "x@xn--mnchen-3ya.de"),
        .init(input: "\"john doe\"@example.com", address: "\"john doe\"@example.com", normalized: "\"john doe\"@example.com"),
        .init(input: "\"a@b\"@example.com", address: "\"a@b\"@example.com", normalized: "\"a@b\"@example.com"),
        .init(input: "\"quote\\\"inside\"@example.com", address: "\"quote\\\"inside\"@example.com", normalized: "\"quote\\\"inside\"@example.com"),
        // One form per mailbox: a quoted dot-atom is the dot-atom, a needless backslash is dropped
        // (each variant was another account and another per-address mail limit).
        .init(input: "\"victim\"@example.com", address: "victim@example.com", normalized: "victim@example.com"),
        .init(input: "\"V\\ict\\im\"@example.com", address: "Victim@example.com", normalized: "victim@example.com"),
        .init(input: "\"first.last\"@example.com", address: "first.last@example.com", normalized: "first.last@example.com"),
        .init(input: "\"john\\ doe\"@example.com", address: "\"john doe\"@example.com", normalized: "\"john doe\"@example.com"),
        .init(input: "\"a\\\\b\"@example.com", address: "\"a\\\\b\"@example.com", normalized: "\"a\\\\b\"@example.com"),
        .init(input: "\"a..b\"@example.com", address: "\"a..b\"@example.com", normalized: "\"a..b\"@example.com"),
        .init(input: "o'brien@example.ie", address: "o'brien@example.ie", normalized: "o'brien@example.ie"),
        .init(input: "no-reply@localhost", address: "no-reply@localhost", normalized: "no-reply@localhost"),
        // UTS #46 mapping (libidn2): full-width letters and stops, non-transitional ß.
        .init(input: "a@ｅｘａｍｐｌｅ．ｃｏｍ", address: "a@example.com", normalized: "a@example.com"),
        .init(input: "a@faß.de", address: "a@xn--fa-hia.de", normalized: "a@xn--fa-hia.de"),
        .init(input: "a@ＢÜＣＨＥＲ.de", address: "a@xn--bcher-kva.de", normalized: "a@xn--bcher-kva.de"),
    ]

    @Test("accepted and normalized", arguments: accepted)
    func accepts(_ c: Accepted) throws {
        let parsed = try EmailAddress.parse(c.input)
        #expect(parsed.address == c.address)
        #expect(parsed.normalized == c.normalized)
    }

    struct Refused: Sendable, CustomTestStringConvertible {
        let input: String, reason: EmailAddressError.Reason
        var testDescription: String { input.debugDescription }
    }

    static let local64 = String(repeating: "a", count: 64)
    static let refused: [Refused] = [
        .init(input: "", reason: .empty),
        .init(input: "   ", reason: .empty),
        .init(input: "alice@example.com\r\nBcc: victim@example.org", reason: .controlCharacter),
        .init(input: "alice@example.com\n", reason: .controlCharacter),
        .init(input: "ali\u{0}ce@example.com", reason: .controlCharacter),
        .init(input: "alice@exam\u{202E}ple.com", reason: .invisibleCharacter),
        .init(input: "alice.example.com", reason: .missingAt),
        .init(input: "alice@bob@example.com", reason: .multipleAt),
        .init(input: "Alice <alice@example.com>", reason: .displayName),
        .init(input: "\"Alice\" <alice@example.com>", reason: .displayName),
        .init(input: "<alice@example.com>", reason: .displayName),
        .init(input: "alice@example.com, bob@example.com", reason: .displayName),
        .init(input: "@example.com", reason: .emptyLocalPart),
        .init(input: "alice@", reason: .emptyDomain),
        .init(input: ".alice@example.com", reason: .invalidLocalPart),
        .init(input: "al..ice@example.com", reason: .invalidLocalPart),
        .init(input: "alice.@example.com", reason: .invalidLocalPart),
        .init(input: "al(ice@example.com", reason: .invalidLocalPart),
        .init(input: "jürgen@example.com", reason: .nonASCIILocalPart),
        .init(input: "\"open@example.com", reason: .unterminatedQuote),
        .init(input: "alice@[192.168.0.1]", reason: .addressLiteral),
        .init(input: "alice@192.168.0.1", reason: .addressLiteral),
        .init(input: "alice@exa_mple.com", reason: .invalidDomain),
        .init(input: "alice@-example.com", reason: .invalidDomain),
        .init(input: "alice@example..com", reason: .invalidDomain),
        .init(input: "alice@example.com.", reason: .invalidDomain),
        // IDNA2008 validity (libidn2): symbols are not letters of any script; no empty labels.
        .init(input: "alice@☃.com", reason: .invalidDomain),
        .init(input: "alice@bücher..de", reason: .invalidDomain),
        .init(input: "alice@bücher.de。", reason: .invalidDomain),
        .init(input: "alice@xn--bcher-kva\u{0301}.de", reason: .invalidDomain),
        .init(input: local64 + "a@example.com", reason: .localPartTooLong),
        .init(input: "a@" + String(repeating: "b", count: 64) + ".com", reason: .invalidDomain),
        // 64 + 1 + 63 + 1 + 63 + 1 + 62 = 255 octets.
        .init(input: local64 + "@" + String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 63)
              + "." + String(repeating: "d", count: 62), reason: .tooLong),
    ]

    @Test("refused with a reason", arguments: refused)
    func refuses(_ c: Refused) {
        let error = #expect(throws: EmailAddressError.self) { try EmailAddress.parse(c.input) }
        #expect(error?.reason == c.reason)
        #expect(error.map { !$0.description.contains("example") } ?? false, "messages never echo the address")
    }

    @Test("254 octets is the longest accepted address")
    func longest() throws {
        let address = Self.local64 + "@" + String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 63)
            + "." + String(repeating: "d", count: 61)
        #expect(address.utf8.count == 254)
        #expect(try EmailAddress.parse(address).address == address)
    }

    @Test("local parts compare case-insensitively but are sent as given")
    func caseInsensitiveLocalPart() throws {
        let a = try EmailAddress.parse("Bob@Example.com")
        let b = try EmailAddress.parse("bob@example.COM")
        #expect(a == b)
        #expect(a.address == "Bob@example.com")
    }
}
