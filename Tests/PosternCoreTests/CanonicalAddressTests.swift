import PosternCore
import Testing

@Suite("Canonical addresses (for counting)")
struct CanonicalAddressTests {
    static let defaults = Set(CanonicalAddress.defaultSubaddressDomains)

    func canonical(_ input: String, _ domains: Set<String> = defaults) throws -> String {
        CanonicalAddress(try EmailAddress.parse(input), subaddressDomains: domains).text
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let input: String, canonical: String
        var testDescription: String { "\(input) → \(canonical)" }
    }

    static let merged: [Case] = [
        // The issue's spellings of one Gmail mailbox.
        .init(input: "a.d.a+1@gmail.com", canonical: "ada@gmail.com"),
        .init(input: "ada+2@gmail.com", canonical: "ada@gmail.com"),
        .init(input: "a.da@googlemail.com", canonical: "ada@gmail.com"),
        .init(input: "ADA@GMAIL.COM", canonical: "ada@gmail.com"),
        .init(input: "A.d.A+Work+More@GoogleMail.Com", canonical: "ada@gmail.com"),
        .init(input: "  ada@gmail.com ", canonical: "ada@gmail.com"),
        .init(input: #""a.da"@gmail.com"#, canonical: "ada@gmail.com"),  // a quoted dot-atom is the dot-atom
        // The default subaddress domains: the +tag goes, dots stay.
        .init(input: "Ada.L+news@Outlook.com", canonical: "ada.l@outlook.com"),
        .init(input: "ada+x@hotmail.com", canonical: "ada@hotmail.com"),
        .init(input: "ada+x@icloud.com", canonical: "ada@icloud.com"),
        .init(input: "ada+x@me.com", canonical: "ada@me.com"),
        .init(input: "ada+x@fastmail.com", canonical: "ada@fastmail.com"),
        .init(input: "ada+x@proton.me", canonical: "ada@proton.me"),
        .init(input: "ada+x@protonmail.com", canonical: "ada@protonmail.com"),
        // IDN domains: lower-cased A-labels, as EmailAddress keeps them.
        .init(input: "Ada@BÜCHER.de", canonical: "ada@xn--bcher-kva.de"),
        .init(input: "ada@ｇｍａｉｌ．ｃｏｍ", canonical: "ada@gmail.com"),
    ]

    @Test("spellings of one mailbox count as one", arguments: merged)
    func merges(_ c: Case) throws {
        #expect(try canonical(c.input) == c.canonical)
    }

    static let kept: [Case] = [
        // Outlook.com reads dots: a.da and ada are two mailboxes.
        .init(input: "a.da@outlook.com", canonical: "a.da@outlook.com"),
        // A domain not listed keeps its +tag (its server may deliver user+tag elsewhere).
        .init(input: "ada+1@example.com", canonical: "ada+1@example.com"),
        .init(input: "a.da+1@example.com", canonical: "a.da+1@example.com"),
        // Yahoo's disposable addresses use '-', with a base name unrelated to the mailbox: not listed.
        .init(input: "ada+1@yahoo.com", canonical: "ada+1@yahoo.com"),
        .init(input: "ada-shop@yahoo.com", canonical: "ada-shop@yahoo.com"),
        // A subdomain is another domain.
        .init(input: "a.da+1@mail.gmail.com", canonical: "a.da+1@mail.gmail.com"),
        .init(input: "ada+1@eu.outlook.com", canonical: "ada+1@eu.outlook.com"),
        // A quoted local part is left as it is (lower-cased as the normalized address is).
        .init(input: #""A.d a+1"@gmail.com"#, canonical: #""a.d a+1"@gmail.com"#),
        // Nothing before the '+': there is no mailbox name to count on.
        .init(input: "+ada@outlook.com", canonical: "+ada@outlook.com"),
    ]

    @Test("spellings that may be two mailboxes are not merged", arguments: kept)
    func keeps(_ c: Case) throws {
        #expect(try canonical(c.input) == c.canonical)
    }

    @Test("--subaddress-domains none turns +tags off outside Gmail; a list replaces the defaults")
    func configuredDomains() throws {
        #expect(try canonical("ada+1@outlook.com", []) == "ada+1@outlook.com")
        #expect(try canonical("a.d.a+1@gmail.com", []) == "ada@gmail.com")
        #expect(try canonical("ada+1@example.org", ["example.org"]) == "ada@example.org")
        #expect(try canonical("ada+1@outlook.com", ["example.org"]) == "ada+1@outlook.com")
    }

    @Test("never the recipient, never the account's address: the parsed address keeps what was typed")
    func addressUnchanged() throws {
        let typed = try EmailAddress.parse("A.d.A+1@GoogleMail.com")
        _ = CanonicalAddress(typed, subaddressDomains: Self.defaults)
        #expect(typed.address == "A.d.A+1@googlemail.com")
        #expect(typed.normalized == "a.d.a+1@googlemail.com")
    }

    @Test("the setting: none, a list in any case and script, and a refusal of what is not a domain")
    func setting() throws {
        let defaults = try Settings.resolve(flags: [:], environment: [:], file: [:])
        #expect(defaults.subaddressDomains == CanonicalAddress.defaultSubaddressDomains)
        let none = try Settings.resolve(flags: ["subaddress-domains": "none"], environment: [:], file: [:])
        #expect(none.subaddressDomains.isEmpty)
        let listed = try Settings.resolve(flags: ["subaddress-domains": "Example.ORG, bücher.de"], environment: [:], file: [:])
        #expect(listed.subaddressDomains == ["example.org", "xn--bcher-kva.de"])
        #expect(AuthConfiguration(listed).subaddressDomains == ["example.org", "xn--bcher-kva.de"])
        #expect(throws: SettingsError.self) {
            _ = try Settings.resolve(flags: ["subaddress-domains": "not a domain"], environment: [:], file: [:])
        }
        #expect(throws: SettingsError.self) {
            _ = try Settings.resolve(flags: ["subaddress-domains": ","], environment: [:], file: [:])
        }
    }
}
