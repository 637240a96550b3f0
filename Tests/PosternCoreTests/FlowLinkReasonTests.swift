import Foundation
import PosternCore
import PosternCrypto
import Testing

/// Why a link failed (issue 15 point 4): a genuine code (valid signature) is told used, expired,
/// superseded or opened in another browser; anything else gets the generic INVALID_OOB_CODE. The
/// reason concerns only the code held, never the account or another address.
@Suite("Link failure reasons")
struct FlowLinkReasonTests {
    static let cookie = "browsercookieA1b2C3d4E5f6G7h8I9j"
    static let otherCookie = "browsercookieZ9y8X7w6V5u4T3s2R1q"

    /// The oobCode of a link.
    func oobCode(_ link: String) throws -> String {
        let items = try #require(URLComponents(string: link)?.queryItems)
        return try #require(items.first { $0.name == "oobCode" }?.value)
    }

    /// `link` with one character of its oobCode's tag changed: a forgery.
    func tampered(_ link: String) throws -> String {
        var code = Array(try oobCode(link))
        code[70] = code[70] == "A" ? "B" : "A"
        return link.replacingOccurrences(of: try oobCode(link), with: String(code))
    }

    func failures(_ h: FlowHarness) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: h.service.metrics.linkFailures().map { ($0.reason, $0.count) })
    }

    @Test("used: a completed link says LINK_USED; with the verifier that completed it, signedInHere")
    func used() throws {
        let h = try FlowHarness()
        let link = try h.usedLink("a@example.com")
        let error = expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        #expect(error?.details["signedInHere"] == nil, "an unbound link knows no browser")
        expectAuthError("LINK_USED") { _ = try h.service.addresses.inspect(link: link, oobCode: nil) }
        #expect(failures(h)["used"] == 2)

        // A PKCE link: the device that completed it (its verifier) is told it is signed in.
        let verifier = "device-verifier-" + Base64URL.encode(try SecureRandom.bytes(24))
        try h.service.emailLink.send(EmailLinkRequest(email: "b@example.com", codeChallenge: Base64URL.encode(SHA256.hash(verifier))))
        let pkce = try h.lastLink()
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: pkce, codeVerifier: verifier))
        let here = expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: pkce, codeVerifier: verifier)) }
        #expect(here?.details["signedInHere"] == "true")
        let elsewhere = expectAuthError("LINK_USED") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: pkce, codeVerifier: "someone-else-verifier-0123456789abcdef"))
        }
        #expect(elsewhere?.details["signedInHere"] == nil, "another verifier is not the device that signed in")
        #expect(h.service.ledger.browserCheck(oobCode: try oobCode(pkce), browserVerifier: verifier)?.signedInHere == true)
        #expect(h.service.ledger.browserCheck(oobCode: try oobCode(pkce), browserVerifier: nil)?.signedInHere == false)
    }

    @Test("expired: a genuine code past its life says EXPIRED_OOB_CODE, for every kind")
    func expired() throws {
        let h = try FlowHarness()
        let login = try h.signUp("c@example.com", password: "a good password")
        try h.service.emailLink.send(EmailLinkRequest(email: "c@example.com"))
        let signIn = try h.lastLink()
        try h.service.passwords.requestReset(email: "c@example.com", continueURL: nil, locale: nil)
        let reset = try h.lastLink()
        try h.service.addresses.requestVerification(idToken: login.session.idToken, continueURL: nil)
        let verify = try h.lastLink()
        h.clock.advance(by: 8 * 86_400)
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: signIn)) }
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.addresses.apply(link: reset, oobCode: nil, newPassword: "another password") }
        expectAuthError("EXPIRED_OOB_CODE") { _ = try h.service.addresses.apply(link: verify, oobCode: nil, newPassword: nil) }
        #expect(failures(h)["expired"] == 3)
    }

    @Test("superseded: using one link ends the address's other open links of its kind; asking alone ends nothing")
    func superseded() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "d@example.com"))
        let first = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "d@example.com"))
        let second = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "d@example.com"))
        let third = try h.lastLink()
        // Asking again superseded nothing: an attacker asking for links cannot kill the owner's.
        #expect(try h.service.addresses.inspect(link: first, oobCode: nil).mode == .signIn)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: second))
        expectAuthError("LINK_SUPERSEDED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: first)) }
        expectAuthError("LINK_SUPERSEDED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: third)) }
        expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: second)) }
        #expect(failures(h)["superseded"] == 2)

        // A verification link: the second one is superseded once the first was used.
        let login = try h.signIn("e@example.com")
        try h.service.addresses.requestVerification(idToken: login.session.idToken, continueURL: nil)
        let verifyOne = try h.lastLink()
        try h.service.addresses.requestVerification(idToken: login.session.idToken, continueURL: nil)
        let verifyTwo = try h.lastLink()
        _ = try h.service.addresses.apply(link: verifyOne, oobCode: nil, newPassword: nil)
        expectAuthError("LINK_SUPERSEDED") { _ = try h.service.addresses.apply(link: verifyTwo, oobCode: nil, newPassword: nil) }
    }

    @Test("other browser: a bindBrowser link completes only with its cookie (or the typed code); again there, signedInHere")
    func otherBrowser() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "f@example.com", browserVerifier: Self.cookie))
        let link = try h.lastLink()
        let code = try oobCode(link)
        #expect(h.service.ledger.browserCheck(oobCode: code, browserVerifier: Self.cookie) == BrowserCheck(binding: .sameBrowser, used: false, browserBound: true))
        #expect(h.service.ledger.browserCheck(oobCode: code, browserVerifier: Self.otherCookie)?.binding == .otherBrowser)
        expectAuthError("LINK_OTHER_BROWSER") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        expectAuthError("LINK_OTHER_BROWSER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, browserVerifier: Self.otherCookie))
        }
        // The cookie's value put in the body is not the cookie: the bound link takes only the cookie.
        expectAuthError("LINK_OTHER_BROWSER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, codeVerifier: Self.cookie))
        }
        #expect(failures(h)["other_browser"] == 3)
        // Nothing was consumed by the refusals; in its browser the link works, and a second click there is "already signed in".
        let login = try h.service.emailLink.complete(EmailLinkCompletion(link: link, browserVerifier: Self.cookie))
        #expect(login.email == "f@example.com")
        let again = expectAuthError("LINK_USED") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link, browserVerifier: Self.cookie))
        }
        #expect(again?.details["signedInHere"] == "true")
        let there = expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link)) }
        #expect(there?.details["signedInHere"] == nil)

        // The 6-digit code of a bound link is typed in any browser.
        try h.service.emailLink.send(EmailLinkRequest(email: "g@example.com", browserVerifier: Self.cookie))
        let typed = try h.service.emailLink.complete(EmailLinkCompletion(code: try h.lastCode(), email: "g@example.com"))
        #expect(typed.email == "g@example.com")

        // bindBrowser is its own verifier: not with a codeChallenge or an approval; a bad cookie is refused.
        expectAuthError("INVALID_ARGUMENT") {
            _ = try h.service.emailLink.send(EmailLinkRequest(
                email: "h@example.com", codeChallenge: Base64URL.encode(SHA256.hash("x")), browserVerifier: Self.cookie))
        }
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.emailLink.send(EmailLinkRequest(email: "h@example.com", browserVerifier: "short")) }
    }

    @Test("attacker: a tampered or forged code gets the generic answer, never used, expired or superseded")
    func forged() throws {
        let h = try FlowHarness()
        let used = try h.usedLink("i@example.com")
        try h.service.emailLink.send(EmailLinkRequest(email: "i@example.com", browserVerifier: Self.cookie))
        let bound = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "j@example.com"))
        let expiring = try h.lastLink()
        h.clock.advance(by: 601)
        for link in [used, bound, expiring] {
            let forged = try tampered(link)
            expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: forged)) }
            expectAuthError("INVALID_OOB_CODE") { _ = try h.service.addresses.inspect(link: forged, oobCode: nil) }
            #expect(h.service.ledger.browserCheck(oobCode: try oobCode(forged), browserVerifier: Self.cookie) == nil)
        }
        // Random bytes of the right shape, and garbage.
        let random = Base64URL.encode(try SecureRandom.bytes(62))
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(oobCode: random)) }
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(oobCode: "not-a-code")) }
        #expect(failures(h)["invalid"] == 8)
        #expect(failures(h)["used"] == 0 && failures(h)["expired"] == 0 && failures(h)["superseded"] == 0)
    }

    @Test("attacker: a code for address A says nothing about address B, whether B has an account or not")
    func otherAddress() throws {
        // The same sequence for A, once beside a B with an account, once beside a B without.
        func run(bHasAccount: Bool) throws -> [String] {
            let h = try FlowHarness()
            if bHasAccount { try h.signIn("b@example.com") }
            try h.service.emailLink.send(EmailLinkRequest(email: "b@example.com"))
            let bLink = try h.lastLink()
            try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
            let aLink = try h.lastLink()
            var answers: [String] = []
            // A's link with B's address typed: the mismatch, not B's state.
            answers.append(expectAuthError("EMAIL_MISMATCH") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(link: aLink, email: "b@example.com"))
            }?.description ?? "")
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: aLink))
            answers.append(expectAuthError("LINK_USED") { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: aLink)) }?.description ?? "")
            // Using A's link superseded nothing of B's.
            #expect(try h.service.addresses.inspect(link: bLink, oobCode: nil).mode == .signIn)
            return answers
        }
        #expect(try run(bHasAccount: true) == run(bHasAccount: false))
    }

    @Test("timing: every refusal of a genuine code does the same store lookups, whatever the reason")
    func sameStoreWork() throws {
        let h = try FlowHarness()
        // used
        let used = try h.usedLink("k@example.com")
        // superseded
        try h.service.emailLink.send(EmailLinkRequest(email: "l@example.com"))
        let superseded = try h.lastLink()
        try h.service.emailLink.send(EmailLinkRequest(email: "l@example.com"))
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        // open (the reads of a link that works, up to its completion)
        try h.service.emailLink.send(EmailLinkRequest(email: "m@example.com"))
        let open = try h.lastLink()
        var counts: [String: Int] = [:]
        for (name, link) in [("used", used), ("superseded", superseded), ("open", open)] {
            let before = h.store.lookups.count
            _ = try? h.service.addresses.inspect(link: link, oobCode: nil)
            counts[name] = h.store.lookups.count - before
        }
        #expect(Set(counts.values).count == 1, "lookups by reason: \(counts)")
    }
}
