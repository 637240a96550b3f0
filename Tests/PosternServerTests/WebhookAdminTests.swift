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
        let bad = [
            "ftp://hooks.example/", "https://u:p@hooks.example/", "https:///x", "https://a b/", "http://a", "https://a", "https://",
            "https://ab/\u{01}", "https://ab/x\u{7f}", "HTTPS://ab", " https://ab", "https://ab/" + String(repeating: "x", count: 1990),
        ]
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
}
