import Foundation
import PosternCore
import Testing

/// A sign-in by a mailed code (the 6-digit code typed with the address, or its link) proves the
/// mailbox receives mail: it lifts a bounce or rejected suppression of that address in the same
/// transaction, never a complaint; a failed sign-in lifts nothing.
@Suite("Suppressions lifted by a sign-in")
struct FlowSuppressionLiftTests {
    static let ann = EmailAddress.restored(localPart: "ann", domain: "example.com")

    func suppress(_ h: FlowHarness, _ reason: SuppressionReason) throws {
        try h.store.write { try $0.suppress(Self.ann, reason: reason.stored("5.1.1"), now: 1) }
    }

    func reason(_ h: FlowHarness) throws -> SuppressionReason? { try h.store.read { try $0.suppression(of: Self.ann) }?.reason }

    @Test("the 6-digit code lifts a bounce and a rejection; a wrong code lifts nothing", arguments: [SuppressionReason.bounce, .rejected])
    func codeLifts(kind: SuppressionReason) throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "Ann@example.com"))
        let digits = try h.lastCode()
        try suppress(h, kind)
        let wrong = digits == "000000" ? "111111" : "000000"
        expectAuthError("INVALID_OOB_CODE") { _ = try h.service.emailLink.complete(EmailLinkCompletion(code: wrong, email: "ann@example.com")) }
        #expect(try reason(h) == kind, "a refused code proves nothing")
        _ = try h.service.emailLink.complete(EmailLinkCompletion(code: digits, email: "ann@example.com"))
        #expect(try reason(h) == nil)
    }

    @Test("the 6-digit code never lifts a complaint")
    func codeKeepsComplaint() throws {
        let h = try FlowHarness()
        try h.service.emailLink.send(EmailLinkRequest(email: "ann@example.com"))
        let digits = try h.lastCode()
        try suppress(h, .complaint)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(code: digits, email: "ann@example.com"))
        #expect(try reason(h) == .complaint)
    }

    @Test("the link lifts a bounce too, and keeps a complaint; another address's suppression stays")
    func linkLifts() throws {
        let h = try FlowHarness()
        let bob = EmailAddress.restored(localPart: "bob", domain: "example.com")
        try h.store.write { try $0.suppress(bob, reason: SuppressionReason.bounce.stored("5.1.1"), now: 1) }
        try h.service.emailLink.send(EmailLinkRequest(email: "ann@example.com"))
        let link = try h.lastLink()
        try suppress(h, .bounce)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
        #expect(try reason(h) == nil)
        #expect(try h.store.read { try $0.isSuppressed(bob) }, "only the signed-in address")

        try h.service.emailLink.send(EmailLinkRequest(email: "ann@example.com"))
        let second = try h.lastLink()
        try suppress(h, .complaint)
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: second))
        #expect(try reason(h) == .complaint)
    }

    @Test("the hosted sign-in page's code step lifts a rejection the same way (a wrong code first lifts nothing)")
    func hostedPageCode() throws {
        let o = try OIDCHarness()
        guard case .signIn(let pending, _) = try o.flow.authorize(o.parameters(), browser: OIDCHarness.browser, session: nil) else {
            Issue.record("no sign-in page")
            return
        }
        _ = try o.flow.sendLink(request: pending.id, browser: OIDCHarness.browser, email: "ann@example.com")
        try suppress(o.h, .rejected)
        let wrong = try o.h.lastCode() == "000000" ? "111111" : "000000"
        _ = try o.flow.completeWithCode(request: pending.id, browser: OIDCHarness.browser, email: "ann@example.com", code: wrong, session: nil)
        #expect(try reason(o.h) == .rejected)
        let answer = try o.flow.completeWithCode(
            request: pending.id, browser: OIDCHarness.browser, email: "ann@example.com", code: try o.h.lastCode(), session: nil)
        guard case .redirect = answer.outcome else {
            Issue.record("not redirected: \(answer)")
            return
        }
        #expect(try reason(o.h) == nil)
    }
}
