import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// "Approve on your other device" on the hosted sign-in page: the browser that asked shows a
/// number, the mail's link opened elsewhere takes it, and Continue in the asking browser signs in.
@Suite("OIDC flow: approve on another device")
struct OIDCFlowApprovalTests {
    /// The sign-in page's request in `browser`.
    private func pending(_ o: OIDCHarness, browser: String = OIDCHarness.browser) throws -> OIDCPending {
        guard case .signIn(let pending, _) = try o.flow.authorize(o.parameters(), browser: browser, session: nil) else {
            throw FlowHarness.HarnessError.noLink
        }
        return pending
    }

    /// Asks for an approval of `email`: the number the page shows.
    private func ask(_ o: OIDCHarness, _ pending: OIDCPending, email: String, browser: String = OIDCHarness.browser) throws -> Int {
        let outcome = try o.flow.requestApproval(request: pending.id, browser: browser, email: email, device: "Chrome on Linux")
        guard case .approve(let shown, let typed, let number, let waiting) = outcome else {
            Issue.record("no approve page: \(outcome)")
            throw FlowHarness.HarnessError.noMail
        }
        #expect(shown == pending && typed == email && !waiting)
        #expect((10...99).contains(number))
        return number
    }

    @Test("ask → the other device types the number → Continue here: a code, the ID token's amr approval, a browser session")
    func straightPath() throws {
        let o = try OIDCHarness()
        let pending = try pending(o)
        let number = try ask(o, pending, email: "ada@example.com")
        let oobCode = try o.lastOOBCode()
        #expect(try o.h.service.emailLink.approvalPrompt(oobCode: oobCode)?.device == "Chrome on Linux")
        #expect(try o.h.service.emailLink.pickApproval(oobCode: oobCode, number: number) == .approved(device: "Chrome on Linux"))
        let answer = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "ada@example.com", number: number, session: nil)
        guard case .redirect(let url) = answer.outcome else {
            Issue.record("not redirected: \(answer)")
            return
        }
        #expect(answer.newSession != nil)
        #expect(OIDCHarness.query(url, "state") == "st-1" && OIDCHarness.query(url, "iss") == "https://auth.example.com")
        let body = try o.exchange(try #require(OIDCHarness.query(url, "code")))
        let claims = try OIDCHarness.claims(body["id_token"])
        #expect(claims["amr"] as? [String] == ["approval"])
        #expect(claims["email"] as? String == "ada@example.com")
        // The request is done: Continue again finds nothing to finish.
        let again = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "ada@example.com", number: number, session: nil)
        #expect(again.outcome == .refused(.requestExpired) && again.newSession == nil)
    }

    @Test("Continue before the number was typed there: the same page again, saying so, and no session; then it signs in")
    func notApprovedYet() throws {
        let o = try OIDCHarness()
        let pending = try pending(o)
        let number = try ask(o, pending, email: "bob@example.com")
        let early = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "bob@example.com", number: number, session: nil)
        #expect(early.outcome == .approve(pending, email: "bob@example.com", number: number, waiting: true))
        #expect(early.newSession == nil)
        // Pressing it again changes nothing either: the approval still waits.
        _ = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "bob@example.com", number: number, session: nil)
        #expect(try o.h.service.emailLink.pickApproval(oobCode: try o.lastOOBCode(), number: number) == .approved(device: "Chrome on Linux"))
        let done = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "bob@example.com", number: number, session: nil)
        guard case .redirect = done.outcome else {
            Issue.record("not redirected: \(done)")
            return
        }
    }

    @Test("another browser pressing Continue, with the victim's request or its own, takes nothing; the victim still signs in")
    func otherBrowser() throws {
        let o = try OIDCHarness()
        let victims = try pending(o)
        let number = try ask(o, victims, email: "ada@example.com")
        #expect(try o.h.service.emailLink.pickApproval(oobCode: try o.lastOOBCode(), number: number) == .approved(device: "Chrome on Linux"))
        // The attacker knows the request id and the address (not the victim's cookie).
        let stolen = try o.flow.completeApproved(request: victims.id, browser: OIDCHarness.otherBrowser, email: "ada@example.com", number: number, session: nil)
        #expect(stolen.outcome == .refused(.otherBrowser) && stolen.newSession == nil)
        let missing = try o.flow.completeApproved(request: victims.id, browser: nil, email: "ada@example.com", number: number, session: nil)
        #expect(missing.outcome == .refused(.otherBrowser) && missing.newSession == nil)
        // With a request of its own, its verifier is not the approval's.
        let attackers = try pending(o, browser: OIDCHarness.otherBrowser)
        let own = try o.flow.completeApproved(request: attackers.id, browser: OIDCHarness.otherBrowser, email: "ada@example.com", number: number, session: nil)
        #expect(own.outcome == .signIn(attackers, retry: .approvalEnded) && own.newSession == nil)
        let victim = try o.flow.completeApproved(request: victims.id, browser: OIDCHarness.browser, email: "ada@example.com", number: number, session: nil)
        guard case .redirect = victim.outcome, victim.newSession != nil else {
            Issue.record("the victim was not signed in: \(victim)")
            return
        }
    }

    @Test("a wrong number typed on the other device ends the approval: Continue shows the sign-in page saying so, nobody signs in")
    func wrongNumber() throws {
        let o = try OIDCHarness()
        let pending = try pending(o)
        let number = try ask(o, pending, email: "cy@example.com")
        let oobCode = try o.lastOOBCode()
        let wrong = number == 99 ? 10 : number + 1
        #expect(try o.h.service.emailLink.pickApproval(oobCode: oobCode, number: wrong) == .cancelled)
        // The right number afterwards approves nothing: the approval is gone.
        expectAuthError("INVALID_OOB_CODE") { _ = try o.h.service.emailLink.pickApproval(oobCode: oobCode, number: number) }
        let answer = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "cy@example.com", number: number, session: nil)
        #expect(answer.outcome == .signIn(pending, retry: .approvalEnded))
        #expect(answer.newSession == nil)
        // The request itself lives on: asking again works.
        _ = try ask(o, pending, email: "cy@example.com")
    }

    @Test("an expired approval ends too")
    func expired() throws {
        let o = try OIDCHarness { $0.ttlSignIn = 300 }
        let pending = try pending(o)
        let number = try ask(o, pending, email: "dee@example.com")
        o.h.clock.advance(by: 301)
        let answer = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: "dee@example.com", number: number, session: nil)
        #expect(answer.outcome == .signIn(pending, retry: .approvalEnded) && answer.newSession == nil)
    }

    @Test("the approve page is the same for an account's address and a stranger's, before and after Continue; a bad address is the sign-in page")
    func sameForEveryAddress() throws {
        let o = try OIDCHarness()
        try o.h.signIn("ada@example.com")
        for email in ["ada@example.com", "nobody@example.com"] {
            let pending = try pending(o)
            let number = try ask(o, pending, email: email)
            let early = try o.flow.completeApproved(request: pending.id, browser: OIDCHarness.browser, email: email, number: number, session: nil)
            #expect(early.outcome == .approve(pending, email: email, number: number, waiting: true), "\(email)")
        }
        let pending = try pending(o)
        #expect(try o.flow.requestApproval(request: pending.id, browser: OIDCHarness.browser, email: "not an address", device: "Firefox") == .signIn(pending, retry: .badAddress))
        let other = try o.flow.requestApproval(request: pending.id, browser: OIDCHarness.otherBrowser, email: "ada@example.com", device: "Firefox")
        #expect(other == .refused(.otherBrowser))
    }
}
