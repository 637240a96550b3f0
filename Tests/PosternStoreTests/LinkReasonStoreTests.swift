import Foundation
import PosternCore
import PosternCrypto
import PosternStore
import Testing
import PosternTestSupport

/// Why a link failed, on each real store: the browser binding survives reopening, using a link
/// supersedes the address's other open links (and only that address's), a used one says used.
@Suite("Link failure reasons, on each store")
struct LinkReasonStoreTests {
    static let cookie = Base64URL.encode(Array(repeating: 42, count: 24))

    func code(_ link: String) throws -> String {
        try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "oobCode" }?.value)
    }

    func expectCode(_ code: String, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch let error as AuthError {
            #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("browser_bound round-trips; used, superseded and other browser are told; another address is untouched", arguments: StoreKind.available)
    func reasons(kind: StoreKind) throws {
        let h = try StoreFlowHarness(kind)
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", browserVerifier: Self.cookie))
        let bound = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
        let older = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "b@example.com"))
        let other = try h.lastLink()

        // The binding as stored: the column, and only the cookie's S256 (never the cookie).
        let reopened = try h.database.open()
        let id = try #require(CodeNonce.requestID(of: try code(bound)))
        let stored = try #require(try reopened.read { try $0.actionRequest(id: id) })
        #expect(stored.browserBound && stored.codeChallenge == Base64URL.encode(SHA256.hash(Self.cookie)))
        #expect(h.service.ledger.browserCheck(oobCode: try code(bound), browserVerifier: Self.cookie)?.binding == .sameBrowser)

        expectCode("LINK_OTHER_BROWSER") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: bound)) }
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: bound, browserVerifier: Self.cookie))
        expectCode("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: bound, browserVerifier: Self.cookie)) }
        #expect(h.service.ledger.browserCheck(oobCode: try code(bound), browserVerifier: Self.cookie)?.signedInHere == true)
        expectCode("LINK_SUPERSEDED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: older)) }
        // b's link was not touched by a's sign-in.
        #expect(try h.service.emailLink.complete(EmailLinkCompletion(link: other)).email == "b@example.com")
    }
}

/// Reads a code's request id without verifying it (the nonce sits at bytes 14..<30).
enum CodeNonce {
    static func requestID(of code: String) -> String? {
        guard let bytes = Base64URL.decode(code), bytes.count == 62 else { return nil }
        return Base64URL.encode(Array(bytes[14..<30]))
    }
}
