import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import PosternTestSupport
import Testing

/// Who may sign up, over HTTP: a refused sign-up answers byte for byte what an accepted one
/// answers; anonymous sign-in says 403 when sign-ups are not open; `POST /v1/admin/invitations`.
@Suite("Sign-up policy and invitations over HTTP")
struct SignUpRoutesTests {
    static let token = "sign-up-admin-test-token-0123456789abcdef"

    static func harness(_ mode: SignUpPolicy.Mode, domains: Set<String> = []) throws -> RouterTests.Harness {
        let h = try RouterTests.harnessWithService(adminToken: Self.token) {
            $0.signUp = SignUpPolicy(mode: mode, domains: domains)
            $0.allowedContinueHosts = ["app.example.com"]
        }
        try h.store.write { try $0.insertAccount(Account(uid: "member", email: try EmailAddress.parse("member@example.com"), createdAt: 1)) }
        return h
    }

    /// Status, headers and body as one comparable value.
    static func answer(_ response: HTTPResponse) -> String {
        "\(response.status)\n" + response.headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n") + "\n\n"
            + String(decoding: response.body, as: UTF8.self)
    }

    /// What composing every queued mail gives (nil: nothing is sent).
    static func composed(_ h: RouterTests.Harness) throws -> [MailContent?] {
        try h.store.queuedMail().map { try h.service.mailComposer.compose($0.intent, recipient: $0.recipient)?.message.content }
    }

    @Test("send-link and password sign-up: a refused sign-up's answer is byte-identical to an accepted one's; only the accepted is mailed a link")
    func refusedAnswersAsAccepted() throws {
        let requests: [(String, (String) -> String)] = [
            ("/v1/email-link/send", { #"{"email": "\#($0)"}"# }),
            ("/v1/password/sign-up", { #"{"email": "\#($0)", "password": "correct horse battery staple"}"# }),
        ]
        for (path, body) in requests {
            let open = try Self.harness(.open)
            let accepted = Self.answer(open.router.handle(RouterTests.request("POST", path, body: body("new@example.com"))))
            #expect(accepted.hasPrefix("202"))
            var refusals: [String: String] = [:]
            for (name, mode, domains, address) in [
                ("closed", SignUpPolicy.Mode.closed, Set<String>(), "new@example.com"), ("invite", .invite, [], "new@example.com"),
                ("other domain", .open, ["example.org"], "new@example.com"), ("suffix", .open, ["example.com"], "new@example.com.evil.org"),
            ] {
                let h = try Self.harness(mode, domains: domains)
                refusals[name] = Self.answer(h.router.handle(RouterTests.request("POST", path, body: body(address))))
                #expect(try Self.composed(h) == [nil], "\(path), \(name): nothing to send")
                // The address that has an account is answered the same, and mailed.
                let member = Self.answer(h.router.handle(RouterTests.request("POST", path, body: body("member@example.com"))))
                #expect(member == accepted, "\(path), \(name): an existing account")
                #expect(try Self.composed(h).last.map { $0 != nil } == true)
            }
            for (name, refused) in refusals { #expect(refused == accepted, "\(path), \(name)") }
            #expect(try Self.composed(open).count == 1 && Self.composed(open)[0] != nil)
        }
    }

    @Test("anonymous sign-in: 403 SIGN_UP_NOT_ALLOWED when invite or closed, 200 when open")
    func anonymous() throws {
        for mode in [SignUpPolicy.Mode.invite, .closed] {
            let response = try Self.harness(mode).router.handle(RouterTests.request("POST", "/v1/accounts/anonymous", body: "{}"))
            #expect(response.status == 403 && RouterTests.errorCode(response) == "SIGN_UP_NOT_ALLOWED")
        }
        #expect(try Self.harness(.open).router.handle(RouterTests.request("POST", "/v1/accounts/anonymous", body: "{}")).status == 200)
    }

    @Test("POST /v1/admin/invitations: 202 and an invitation mail; 409 EMAIL_EXISTS and nothing queued for an account; 401 without the token")
    func invitations() throws {
        let h = try Self.harness(.closed)
        let body = #"{"email": "guest@example.com", "continueUrl": "https://app.example.com/welcome"}"#
        #expect(h.router.handle(RouterTests.request("POST", "/v1/admin/invitations", body: body)).status == 401)
        #expect(h.store.queuedMail().isEmpty)
        let sent = h.router.handle(RouterTests.request("POST", "/v1/admin/invitations", body: body, bearer: Self.token))
        #expect(sent.status == 202 && String(decoding: sent.body, as: UTF8.self) == #"{"status":"sent"}"#, "\(Self.answer(sent))")
        guard case .invitation(let link, _)?? = try Self.composed(h).first else {
            Issue.record("an invitation mail")
            return
        }
        #expect(link.contains("mode=signIn"))
        let taken = h.router.handle(RouterTests.request("POST", "/v1/admin/invitations", body: #"{"email": "member@example.com"}"#, bearer: Self.token))
        #expect(taken.status == 409 && RouterTests.errorCode(taken) == "EMAIL_EXISTS")
        #expect(h.store.queuedMail().count == 1)
        let completed = h.router.handle(RouterTests.request("POST", "/v1/email-link/complete", body: #"{"link": "\#(link)"}"#))
        #expect(completed.status == 200 && (RouterTests.json(completed)["isNewUser"] as? Bool) == true)
    }
}
