import Foundation
import PosternAPI
import PosternCore
import Testing

@Suite("The webhook admin API's contract")
struct WebhookAdminTests {
    @Test("the request schema lists exactly the event types the core sends")
    func eventTypesAgree() {
        #expect(WebhookEndpointRequestBody.eventTypes == WebhookEvent.types)
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
