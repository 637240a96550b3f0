import PosternCore
import Testing

@Suite("Pasted-link parser")
struct LinkParserTests {
    let parser: PastedLinkParser
    let code = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEf"

    init() throws {
        parser = PastedLinkParser(policy: try LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["app.example.com"]))
    }

    private func link(_ origin: String = "https://auth.example.com", extra: String = "") -> String {
        "\(origin)/action?mode=signIn&oobCode=\(code)\(extra)"
    }

    private var signIn: PastedAction {
        .link(ActionLink(mode: .signIn, oobCode: code))
    }

    // MARK: policy

    @Test("a public URL that is not an absolute http(s) URL with a host is a configuration error")
    func badPublicURL() {
        for bad in ["", "auth.example.com", "ftp://auth.example.com", "https://", "https://user@auth.example.com", "https://a b.com"] {
            #expect(throws: LinkPolicyError.invalidPublicURL, "\(bad)") {
                try LinkPolicy(publicURL: bad, allowedHosts: [])
            }
        }
        #expect(throws: LinkPolicyError.invalidAllowedHost) {
            try LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["https://app.example.com/x"])
        }
    }

    @Test("the policy keeps the origin lower-cased with its default port")
    func policyOrigin() throws {
        let policy = try LinkPolicy(publicURL: " HTTPS://Auth.Example.COM/base ", allowedHosts: ["App.Example.com", "localhost:3000"])
        #expect(policy.scheme == "https")
        #expect(policy.host == "auth.example.com")
        #expect(policy.port == 443)
        #expect(policy.allowedHosts == ["app.example.com", "localhost:3000"])
    }

    // MARK: origin

    @Test("an explicit default port and an upper-case host are the same origin")
    func sameOriginSpellings() throws {
        #expect(try parser.parse(link("https://auth.example.com:443")) == signIn)
        #expect(try parser.parse(link("HTTPS://AUTH.Example.com")) == signIn)
    }

    @Test("another port, a look-alike or a user-info trick is another site")
    func otherSites() {
        #expect(throws: LinkRefusal.foreignHost) { try parser.parse(link("https://auth.example.com:8443")) }
        #expect(throws: LinkRefusal.foreignHost) { try parser.parse(link("https://auth.example.com.")) }
        #expect(throws: LinkRefusal.foreignHost) { try parser.parse(link("https://example.com")) }
        #expect(throws: LinkRefusal.deceptiveLink) { try parser.parse(link("https://auth.example.com:443@evil.test")) }
        #expect(throws: LinkRefusal.deceptiveLink) { try parser.parse(link("https://evil.test\\@auth.example.com")) }
        #expect(throws: LinkRefusal.deceptiveLink) { try parser.parse(link("https://auth.example.com\\.evil.test")) }
    }

    @Test("an app link must use https when the service does")
    func appLinks() throws {
        #expect(try parser.parse(link("https://app.example.com")) == signIn)
        #expect(throws: LinkRefusal.insecure) { try parser.parse(link("http://app.example.com")) }
        #expect(throws: LinkRefusal.insecure) { try parser.parse(link("http://auth.example.com:443")) }
    }

    @Test("a development service on http accepts http links to its own origin and pinned app port")
    func developmentPolicy() throws {
        let local = PastedLinkParser(policy: try LinkPolicy(publicURL: "http://127.0.0.1:8080", allowedHosts: ["localhost:3000"]))
        #expect(try local.parse(link("http://127.0.0.1:8080")) == signIn)
        #expect(try local.parse(link("http://localhost:3000")) == signIn)
        #expect(throws: LinkRefusal.foreignHost) { try local.parse(link("http://localhost:3001")) }
        #expect(throws: LinkRefusal.foreignHost) { try local.parse(link("http://127.0.0.1:8081")) }
    }

    @Test("javascript: is refused as unsafe")
    func javascript() {
        #expect(throws: LinkRefusal.unsafeScheme) { try parser.parse("javascript:void(0)//?mode=signIn&oobCode=\(code)") }
    }

    // MARK: continueUrl

    @Test("continueUrl must be absolute, on an allowed host or the service's own, with no tricks")
    func continueURLs() throws {
        func with(_ continueUrl: String) -> String {
            link(extra: "&continueUrl=" + LinkWrapperEncoders.percentEncoded(continueUrl))
        }
        for good in ["https://app.example.com/", "https://APP.example.com/x?y=1#z", "https://app.example.com:443/x",
                     "https://auth.example.com/done", "https://app.example.com/x?modes=1&codes=2#tab"] {
            #expect(try parser.parse(with(good)) == .link(ActionLink(mode: .signIn, oobCode: code, continueUrl: good)), "\(good)")
        }
        for bad in ["//evil.test/x", "/relative", "https:evil.test", "https:///evil.test", "https://app.example.com@evil.test/",
                    "https://app.example.com:443@evil.test", "https://evil.test#@app.example.com", "https:\\\\evil.test",
                    "https://app.example.com\\@evil.test", "https://app.example.com.evil.test/", "http://app.example.com/",
                    "javascript:alert(1)", "https://app.example.com /x", "https://app.exa\tmple.com/", "ftp://app.example.com/",
                    // Another port of an allowed host is another origin (it would receive live codes).
                    "https://APP.example.com:8443/x", "https://auth.example.com:8443/", "https://app.example.com:80/",
                    // Parameters the hosted page appends: one already there would be read first.
                    "https://app.example.com/x?oobCode=EVIL", "https://app.example.com/x?a=1&mode=signIn",
                    "https://app.example.com/x?OOBCODE=EVIL", "https://app.example.com/x?oob%43ode=EVIL",
                    "https://app.example.com/x?apiKey=k", "https://app.example.com/x?lang=de", "https://app.example.com/x#oobCode=EVIL"] {
            #expect(throws: LinkRefusal.continueURLNotAllowed, "\(bad)") { try parser.parse(with(bad)) }
        }
        #expect(try parser.parse(link(extra: "&continueUrl=")) == signIn)

        // Plain http to a loopback app during development, only when that host is allowed.
        let developer = PastedLinkParser(policy: try LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["localhost:3000"]))
        let local = "http://localhost:3000/dev"
        #expect(try developer.parse(with(local)) == .link(ActionLink(mode: .signIn, oobCode: code, continueUrl: local)))
        #expect(throws: LinkRefusal.continueURLNotAllowed) { try parser.parse(with(local)) }
        #expect(throws: LinkRefusal.continueURLNotAllowed) { try developer.parse(with("http://localhost:3001/dev")) }
    }

    // MARK: codes and modes

    @Test("a missing, empty or damaged code and an unknown mode are refused")
    func codesAndModes() {
        #expect(throws: LinkRefusal.missingCode) { try parser.parse("https://auth.example.com/action?mode=resetPassword&lang=en") }
        #expect(throws: LinkRefusal.missingCode) { try parser.parse("https://auth.example.com/action?mode=signIn&oobCode=&lang=en") }
        #expect(throws: LinkRefusal.malformedCode) { try parser.parse("https://auth.example.com/action?mode=signIn&oobCode=ab%20cd") }
        #expect(throws: LinkRefusal.unknownMode) { try parser.parse("https://auth.example.com/action?oobCode=\(code)") }
        #expect(throws: LinkRefusal.unknownMode) { try parser.parse("https://auth.example.com/action?mode=SIGNIN&oobCode=\(code)") }
        #expect(throws: LinkRefusal.ambiguous) { try parser.parse(link(extra: "&oobCode=other")) }
        #expect(throws: LinkRefusal.ambiguous) { try parser.parse(link(extra: "&oob%43ode=other")) }
    }

    @Test("every mode is read, and an odd lang is dropped rather than trusted")
    func modesAndLang() throws {
        for mode in EmailAction.allCases {
            #expect(try parser.parse("https://auth.example.com/action?mode=\(mode.rawValue)&oobCode=\(code)&lang=de-CH")
                == .link(ActionLink(mode: mode, oobCode: code, lang: "de-CH")))
        }
        #expect(try parser.parse(link(extra: "&lang=..%2F..%2Fetc")) == signIn)
    }

    // MARK: finding

    @Test("links are found in sentences, quotes, markdown, HTML and <URL:…> and trailing punctuation is cut")
    func finding() throws {
        for text in ["See \(link()).", "(\(link()))", "'\(link())'", "\"\(link())\"!", "[x](\(link()))", "<URL:\(link())>",
                     "<a href='\(link())'>x</a>", "&lt;\(link().replacingOccurrences(of: "&", with: "&amp;"))&gt;",
                     "<\(link().replacingOccurrences(of: "oobCode", with: "oob\r\n Code"))>", "Link:\u{00A0}\(link())\u{2026}"] {
            #expect(try parser.parse(text) == signIn, "\(text)")
        }
    }

    @Test("a copy of the link cut short for display is the same link; the whole code is kept")
    func truncatedCopies() throws {
        let cut = link().dropLast(10)
        #expect(try parser.parse("\(cut)\u{2026}\n\(link())") == signIn)
        #expect(try parser.parse("\(link())\n\(cut)...") == signIn)
        #expect(throws: LinkRefusal.ambiguous) {
            try parser.parse("\(link())\n\(link().replacingOccurrences(of: "signIn", with: "verifyEmail"))")
        }
    }

    @Test("a Proofpoint v2 link at the end of a line is not mistaken for quoted-printable")
    func proofpointV2AtLineEnd() throws {
        let wrapped = LinkWrapperEncoders.gateways[2].wrap(link())
        #expect(wrapped.hasSuffix("&e="))
        #expect(try parser.parse("\(wrapped)\nBye") == signIn)
    }

    @Test("a code that starts with 3D is not read as quoted-printable")
    func codeStartingWith3D() throws {
        let text = "https://auth.example.com/action?mode=signIn&oobCode=3DAbCdEfGhIjKlMnOp"
        #expect(try parser.parse(text) == .link(ActionLink(mode: .signIn, oobCode: "3DAbCdEfGhIjKlMnOp")))
    }

    @Test("news and unsubscribe links around the action link are ignored")
    func otherLinksIgnored() throws {
        let text = "Visit https://www.example.com/?a=b and https://auth.example.com/help.\n\(link())\nhttps://x.test/?mode=foo"
        // A valid link wins over look-alikes beside it; alone, the look-alike is refused.
        #expect(try parser.parse(text) == signIn)
        #expect(throws: LinkRefusal.foreignHost) { try parser.parse("Visit https://www.example.com/?a=b https://x.test/?mode=foo") }
    }

    // MARK: gateways

    @Test("Mimecast rewrites cannot be opened offline")
    func mimecast() {
        for text in ["https://protect-eu.mimecast.com/s/AbCdEfGhIjKlMnOp?domain=auth.example.com",
                     "https://url.uk.m.mimecastprotect.com/s/AbCdEf?domain=auth.example.com"] {
            let error = #expect(throws: LinkRefusal.gatewayOffline) { try parser.parse(text) }
            #expect(error?.message.contains("6-digit code") == true)
        }
    }

    @Test("a gateway rewrite without its target is refused as damaged")
    func damagedWrappers() {
        for text in ["https://nam12.safelinks.protection.outlook.com/?data=05%7C02",
                     "https://urldefense.proofpoint.com/v2/url?d=DwMFaQ",
                     "https://urldefense.com/v3/__https://auth.example.com/action*mode*signIn*oobCode*abc__;Pz0!!x$",
                     "https://urldefense.com/v3/__https://auth.example.com/action**Z__;Pz0!!x$",
                     "https://urldefense.com/v3/__https://auth.example.com/action*__;$$$!!x$"] {
            #expect(throws: LinkRefusal.damagedWrapper, "\(text)") { try parser.parse(text) }
        }
    }

    @Test("a Proofpoint v3 run of N takes the next N characters, counted in characters, not bytes")
    func proofpointV3Runs() throws {
        // The four `*` take "?", "=", "&", "="; `**B` (a run of 3) then takes "ü€&" and the last
        // `*` takes "=". A decoder that slices [0..<3] would put "?=&" into the path instead.
        let encoded = LinkWrapperEncoders.base64URL("?=&=ü€&=")
        let text = "https://urldefense.com/v3/__https://auth.example.com/action*mode*signIn*continueUrl*https://app.example.com/**BoobCode*\(code)__;\(encoded)!!t!s$"
        #expect(try parser.parse(text) == .link(ActionLink(mode: .signIn, oobCode: code, continueUrl: "https://app.example.com/ü€")))
    }

    // MARK: bare codes

    @Test("a bare oobCode or a 6-digit code is taken as such")
    func bareCodes() throws {
        #expect(try parser.parse("  \(code)\n") == .oobCode(code))
        #expect(try parser.parse("123456") == .sixDigitCode("123456"))
        #expect(try parser.parse(" 123 456 ") == .sixDigitCode("123456"))
        #expect(try parser.parse("123-456") == .sixDigitCode("123456"))
        #expect(throws: LinkRefusal.notAnActionLink) { try parser.parse("12345") }
        #expect(throws: LinkRefusal.notAnActionLink) { try parser.parse("") }
        #expect(throws: LinkRefusal.notAnActionLink) { try parser.parse("hello there") }
    }

    // MARK: limits

    @Test("more than 1 MiB is refused as too large; exactly 1 MiB is read")
    func sizeLimit() throws {
        let filler = String(repeating: "x", count: PastedLinkParser.maximumInputBytes - link().utf8.count - 1)
        #expect(try parser.parse(filler + " " + link()) == signIn)
        #expect(throws: LinkRefusal.tooLarge) { try parser.parse(filler + "  " + link()) }
    }

    @Test("refusals never hold the code, the link or the host")
    func refusalsHoldNoSecrets() {
        let texts = [link("https://evil.test"), link(extra: "&continueUrl=https%3A%2F%2Fevil.test"), link("http://auth.example.com"),
                     link() + " " + link().replacingOccurrences(of: "AbCd", with: "ZZZZ")]
        for text in texts {
            let error = #expect(throws: LinkRefusal.self) { try parser.parse(text) }
            for secret in [code, "evil.test", "auth.example.com", "https://"] {
                #expect(error?.description.contains(secret) == false)
            }
        }
    }
}
