import PosternCore
import PosternCrypto
import Testing

/// Random action links with the parts the parser must give back.
struct RandomActionLink {
    let expected: ActionLink
    let url: String

    static let publicURL = "https://auth.example.com"
    static let allowedHosts = ["app.example.com"]

    init(using random: inout SeededRandom, host: String = "auth.example.com") {
        let alphabet = Array(Base64URL.alphabet)
        let code = String((0..<Int.random(in: 20...100, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "A" })
        let mode = EmailAction.allCases.randomElement(using: &random) ?? .signIn
        let lang = ["en", "de", "pt-BR", "zh-Hant-TW", nil].randomElement(using: &random) ?? nil
        let continueUrl = Bool.random(using: &random) ? Self.randomContinueURL(using: &random) : nil
        expected = ActionLink(mode: mode, oobCode: code, continueUrl: continueUrl, lang: lang)
        var url = "https://\(host)/action?mode=\(mode.rawValue)&oobCode=\(LinkWrapperEncoders.percentEncoded(code))"
        if let continueUrl {
            url += "&continueUrl=\(LinkWrapperEncoders.percentEncoded(continueUrl))"
        }
        if let lang {
            url += "&lang=\(lang)"
        }
        self.url = url
    }

    /// A valid absolute URL on an allowed host: path segments of unreserved and sub-delimiter
    /// characters, `:@`, runs of `~` (long runs exercise Proofpoint v3's `**X`), percent-encoded
    /// UTF-8, an optional query and fragment.
    static func randomContinueURL(using random: inout SeededRandom) -> String {
        let plain = Array("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-._~!$&'()*+,;=:@")
        let hosts = ["https://app.example.com", "https://APP.example.com:443", "https://auth.example.com"]
        var url = hosts.randomElement(using: &random) ?? "https://app.example.com"
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            url += "/"
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0:
                    url += ["%C3%BC", "%E2%82%AC", "%20", "%2F", "%25", "%F0%9F%98%80"].randomElement(using: &random) ?? "%20"
                case 1:
                    url += String(repeating: "~", count: Int.random(in: 1...140, using: &random))
                default:
                    url.append(plain.randomElement(using: &random) ?? "a")
                }
            }
        }
        if Bool.random(using: &random) {
            url += "?tab=\(Int.random(in: 0...99, using: &random))&ref=mail&next=%2Fhome%3Fa%3D1"
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            url += "#section-2"
        }
        return url
    }
}

@Suite("Pasted-link properties")
struct LinkParserPropertyTests {
    let parser: PastedLinkParser

    init() throws {
        parser = PastedLinkParser(policy: try LinkPolicy(publicURL: RandomActionLink.publicURL, allowedHosts: RandomActionLink.allowedHosts))
    }

    @Test("random codes and continue URLs survive every gateway", arguments: LinkWrapperEncoders.gateways)
    func survivesEveryGateway(_ gateway: LinkWrapperEncoders.Wrapper) throws {
        var random = SeededRandom(seed: 0x5EED_0001)
        for _ in 0..<150 {
            let link = RandomActionLink(using: &random)
            let text = gateway.wrap(link.url)
            #expect(try parser.parse(text) == .link(link.expected), "\(gateway) of \(link.url)")
        }
    }

    @Test("random codes and continue URLs survive every nesting of two gateways")
    func survivesEveryNestingOfTwo() throws {
        var random = SeededRandom(seed: 0x5EED_0002)
        for inner in LinkWrapperEncoders.gateways {
            for outer in LinkWrapperEncoders.gateways {
                for _ in 0..<25 {
                    let link = RandomActionLink(using: &random)
                    let text = outer.wrap(inner.wrap(link.url))
                    #expect(try parser.parse(text) == .link(link.expected), "\(outer) of \(inner) of \(link.url)")
                }
            }
        }
    }

    @Test("a wrapped link survives every way of carrying it in a text", arguments: LinkWrapperEncoders.carriers)
    func survivesEveryCarrier(_ carrier: LinkWrapperEncoders.Wrapper) throws {
        var random = SeededRandom(seed: 0x5EED_0003)
        for gateway in [LinkWrapperEncoders.Wrapper(description: "no gateway") { $0 }] + LinkWrapperEncoders.gateways {
            for _ in 0..<20 {
                let link = RandomActionLink(using: &random)
                let text = carrier.wrap(gateway.wrap(link.url))
                #expect(try parser.parse(text) == .link(link.expected), "\(carrier) of \(gateway) of \(link.url)")
            }
        }
    }

    @Test("any five nested gateways are unwrapped; a sixth is refused as too deep")
    func depthLimit() throws {
        var random = SeededRandom(seed: 0x5EED_0004)
        // v2 and v3 grow the text fastest; keep to the others beyond two levels so sizes stay sane.
        let gateways = LinkWrapperEncoders.gateways
        for _ in 0..<40 {
            let link = RandomActionLink(using: &random)
            var text = link.url
            for level in 1...6 {
                let pool = level <= 2 ? gateways : gateways.filter { !$0.description.hasPrefix("Proofpoint v") || $0.description == "Proofpoint v1" }
                let gateway = pool.randomElement(using: &random) ?? gateways[0]
                text = gateway.wrap(text)
                if level <= PastedLinkParser.maximumWrapperDepth {
                    #expect(try parser.parse(text) == .link(link.expected), "level \(level)")
                } else {
                    #expect(throws: LinkRefusal.tooDeep) { try parser.parse(text) }
                }
            }
        }
    }

    @Test("a wrapped link to a look-alike host is refused, and the refusal never holds its code")
    func foreignHostsStayRefusedThroughWrappers() throws {
        var random = SeededRandom(seed: 0x5EED_0005)
        let hosts = ["auth.example.com.evil.test", "auth.example.co", "auth-example.com", "xauth.example.com", "evil.test"]
        for gateway in LinkWrapperEncoders.gateways {
            for host in hosts {
                let link = RandomActionLink(using: &random, host: host)
                let error = #expect(throws: LinkRefusal.foreignHost) { try parser.parse(gateway.wrap(link.url)) }
                #expect(error.map { !$0.description.contains(link.expected.oobCode) } ?? false)
            }
        }
    }

    @Test("the same link pasted twice, wrapped and bare, is one link; two different links are ambiguous")
    func duplicatesAndAmbiguity() throws {
        var random = SeededRandom(seed: 0x5EED_0006)
        for gateway in LinkWrapperEncoders.gateways {
            let first = RandomActionLink(using: &random)
            let second = RandomActionLink(using: &random)
            #expect(try parser.parse("\(gateway.wrap(first.url))\n\(first.url)") == .link(first.expected))
            #expect(throws: LinkRefusal.ambiguous, "\(gateway): \(first.url) then \(second.url)") {
                try parser.parse("\(gateway.wrap(first.url))\n\(second.url)")
            }
        }
    }
}
