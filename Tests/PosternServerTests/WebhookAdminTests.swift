import Foundation
import PosternAPI
import PosternCore
import Testing

@Suite("The webhook admin API's contract")
struct WebhookAdminTests {
    @Test("the one list of event types holds every event the core makes, each once")
    func eventTypesAgree() throws {
        let email = try EmailAddress.parse("ann@example.org")
        let events: [WebhookEvent] = [
            .userCreated(uid: "u", email: nil), .userSignedIn(uid: "u", method: "password"), .userAnonymousUpgraded(uid: "u", email: email),
            .userMigrated(fromUid: "a", toUid: "b"), .userEmailChanged(uid: "u", email: email), .userPasswordChanged(uid: "u"),
            .userPasswordReset(uid: "u"), .userDeleted(uid: "u"), .sessionRefreshReuseDetected(uid: "u"), .userEmailVerified(uid: "u"),
            .userEmailRecovered(uid: "u", email: email), .userProfileUpdated(uid: "u", fields: []), .userDisabled(uid: "u"),
            .sessionRevoked(uid: "u", reason: "disabled"), .mailSent(messageID: 1, kind: "sign-in", attempts: 1),
            .mailDeferred(messageID: 1, kind: "sign-in", attempts: 1, retryAt: 0),
            .mailFailed(messageID: 1, kind: "sign-in", attempts: 1, email: email),
            .mailBounced(messageID: 1, kind: "sign-in", reason: "bounced", status: "5.1.1", email: email), .webhookTest(endpointID: "ep"),
            .phoneVerified(uid: "u", claimID: "c"), .phoneRemoved(uid: "u", claimID: "c"),
            .userProviderLinked(uid: "u", provider: "google"), .userProviderUnlinked(uid: "u", provider: "google", by: "owner"),
        ]
        #expect(Set(WebhookEvent.types).count == WebhookEvent.types.count)
        #expect(Set(events.map(\.type)).isSubset(of: Set(WebhookEvent.types)))
        #expect(WebhookEvent.types.sorted() == events.map(\.type).sorted())
    }

    @Test("the schema's URL pattern and the daemon's check are one rule: each admits exactly what the other does")
    func urlPatternAgrees() throws {
        let regex = try NSRegularExpression(pattern: WebhookEndpointRequestBody.urlPattern)
        func admitted(_ text: String) -> Bool {
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        let good = ["http://ab", "https://hooks.example/in?x=1#f", "http://127.0.0.1:8080/hooks", "https://[::1]:9/x", "https://bücher.example/ä"]
            + Self.wellFormedHosts
        let bad = [
            "ftp://hooks.example/", "https://u:p@hooks.example/", "https:///x", "https://a b/", "http://a", "https://a", "https://",
            "https://ab/\u{01}", "https://ab/x\u{7f}", "HTTPS://ab", " https://ab", "https://ab/" + String(repeating: "x", count: 1990),
        ] + Self.malformedHosts
        for text in good {
            #expect(admitted(text), "\(text)")
            #expect(throws: Never.self) { try WebhookConfiguration.checkURL(text) }
        }
        for text in bad {
            #expect(throws: SettingsError.self, "\(text)") { try WebhookConfiguration.checkURL(text) }
            // Past the length the schema's maxLength refuses; the pattern alone need not.
            if text.unicodeScalars.count <= WebhookEndpointRequestBody.urlMaximumLength { #expect(!admitted(text), "\(text)") }
        }
    }

    /// Hosts a URL may have: bracketed IPv6 in each of RFC 3986's forms, ports to 65535, a `[`
    /// in the path (which is not the host).
    static let wellFormedHosts = [
        "http://[::]/", "http://[2001:db8::1]:65535/in", "https://[::ffff:192.0.2.1]/", "http://[1:2:3:4:5:6:7:8]",
        "http://[1::2:3:4:5:6:7]", "http://[fe80::1:2]:0", "http://ab:1", "http://hooks.example/a[b]?c=[d]#[e]",
        // schemathesis's: a skin-tone modifier after `//` joins the `/` into one character, so a
        // check by characters found no `https://` prefix where the pattern (by scalars) did.
        "https://\u{1F3FB}\u{FE0C9}", "http://\u{301}ab/",
    ]

    /// What schemathesis's `POST /v1/admin/webhooks` cases once got stored and echoed (a 201 and
    /// every later `GET`), which Python's `urlsplit` refuses with "Invalid IPv6 URL" and curl
    /// cannot post to: unbalanced brackets, brackets around no IPv6 address, a port that is none,
    /// and hosts that compatibility normalisation splits (`／` is `/`, `＠` is `@`, `℀` is `a/c`).
    static let malformedHosts = [
        "http://[ab", "https://[::1/", "http://a]b/x", "http://ab]", "http://[ab]/", "http://[::1.2]/", "http://[::1::]/",
        "http://[1:2:3:4:5:6:7:8:9]/", "http://[::1]x/", "http://[[::1]]/", "http://a[b]c/", "http://[v1.x]/",
        "http://ab:65536/", "http://ab:/", "http://ab:x/", "http://ab:80:80/", "http://::1/",
        "http://ab\u{FF0F}c/", "http://ab\u{FF20}c/", "http://a\u{2100}b/", "http://ab\u{FF1A}8/", "http://ab\u{FF3B}/",
    ]
}
