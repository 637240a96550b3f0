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

    @Test("every URL the schema's pattern admits the daemon accepts (a schema-valid request is never refused), and bad ones neither admit")
    func urlPatternAgrees() throws {
        guard let pattern = WebhookEndpointRequestBody.schema.properties.first(where: { $0.name == "url" })?.schema.pattern else {
            Issue.record("no url pattern")
            return
        }
        let regex = try NSRegularExpression(pattern: pattern)
        func admitted(_ text: String) -> Bool {
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        for text in ["http://ab", "https://hooks.example/in?x=1#f", "http://127.0.0.1:8080/hooks", "https://[::1]:9/x"] {
            #expect(admitted(text), "\(text)")
            #expect(throws: Never.self) { try WebhookConfiguration.checkURL(text) }
        }
        for text in ["ftp://hooks.example/", "https://u:p@hooks.example/", "https:///x", "https://a b/", "http://a", "https://"] {
            #expect(!admitted(text), "\(text)")
            #expect(throws: SettingsError.self) { try WebhookConfiguration.checkURL(text) }
        }
    }
}
