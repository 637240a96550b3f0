import PosternCore
import Testing

extension LinkCorpusCase: CustomTestStringConvertible {
    var testDescription: String { name }
}

@Suite("Pasted-link corpus")
struct LinkParserCorpusTests {
    /// The reason each refusal case of the corpus should give (the corpus only says "error").
    static let expectedCodes: [String: String] = [
        "foreign-host": "FOREIGN_HOST",
        "lookalike-subdomain": "FOREIGN_HOST",
        "userinfo-trick": "DECEPTIVE_LINK",
        "http-downgrade": "INSECURE",
        "missing-code": "MISSING_CODE",
        "empty-code": "MISSING_CODE",
        "unknown-mode": "UNKNOWN_MODE",
        "javascript": "UNSAFE_SCHEME",
        "continue-to-foreign-host": "CONTINUE_URL_NOT_ALLOWED",
        "continue-protocol-relative": "CONTINUE_URL_NOT_ALLOWED",
        "no-link": "NOT_AN_ACTION_LINK",
        "too-deep": "TOO_DEEP",
        "two-different-codes": "AMBIGUOUS",
    ]

    @Test("the shared corpus is found and holds cases")
    func corpusIsFound() {
        #expect(LinkCorpus.fileURL != nil, "set POSTERN_CORPUS or keep shared/corpus beside the clone")
        #expect(!LinkCorpus.cases.isEmpty)
        #expect(!LinkCorpus.cases.contains { $0.name == "unreadable line" })
    }

    @Test("every corpus case parses to its expected link or is refused", arguments: LinkCorpus.cases)
    func corpusCase(_ corpusCase: LinkCorpusCase) throws {
        let policy = try LinkPolicy(publicURL: corpusCase.origin, allowedHosts: corpusCase.allowedHosts)
        let parser = PastedLinkParser(policy: policy)
        switch corpusCase.expectation {
        case .link(let mode, let oobCode, let continueUrl, let lang):
            let expected = try #require(EmailAction(rawValue: mode))
            let parsed = try parser.parse(corpusCase.text)
            #expect(parsed == .link(ActionLink(mode: expected, oobCode: oobCode, continueUrl: continueUrl, lang: lang)))
        case .refusal:
            let error = #expect(throws: LinkRefusal.self) { try parser.parse(corpusCase.text) }
            if let error {
                // A refusal never echoes the code or the link (codes in the corpus are ≥ 6 chars).
                for word in ["abc123", "def456", "oobCode", "://"] {
                    #expect(!error.description.contains(word))
                }
                if let code = Self.expectedCodes[corpusCase.name] {
                    #expect(error.code == code)
                }
            }
        }
    }
}
