import Foundation
import PosternAPI
import PosternCore
import Testing

@Suite("JSON text of a JSONValue")
struct JSONTextTests {
    static func encoderText(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Strings with every character JSON escapes, the ones it need not, and keys whose order
    /// differs between byte order and a case-insensitive or numeric one.
    static let values: [JSONValue] = [
        .null, .bool(true), .bool(false), .integer(0), .integer(-42), .integer(Int64.max), .integer(Int64.min),
        .number(0.5), .number(-1.25e-7), .number(1e21),
        .string(""), .string("plain"), .string("quote \" backslash \\ slash / end"),
        .string("\n\r\t\u{8}\u{C}\u{0}\u{1}\u{1F}\u{7F}"), .string("Grüße 東京 🎉 \u{2028}\u{2029}"),
        .array([]), .array([.integer(1), .string("a"), .null, .array([.object([:])])]),
        .object([:]),
        .object(["b": 1, "a": 2, "B": 3, "_": 4, "a10": 5, "a9": 6, "é": 7, "Z": 8, "": 9]),
        .object(["data": .object(["messageId": 7, "kind": "emailSignIn", "email": "a+b@example.org"]), "type": "mail.sent",
                 "timestamp": "2026-12-01T10:00:00Z"]),
    ]

    @Test("the same bytes as JSONEncoder with sorted keys and unescaped slashes", arguments: values)
    func matchesEncoder(_ value: JSONValue) throws {
        #expect(value.sortedJSONText == (try Self.encoderText(value)))
    }

    @Test("every webhook event's body is the encoder's bytes and reads back")
    func webhookBodies() throws {
        let address = try EmailAddress.parse("Some.One+tag@Example.org")
        let events: [WebhookEvent] = [
            .userCreated(uid: "u\"1", email: address), .userMigrated(fromUid: "a", toUid: "b"),
            .mailSent(messageID: 9, kind: "emailSignIn", attempts: 1),
            .mailDeferred(messageID: 9, kind: "k", attempts: 2, retryAt: 1_700_000_000),
            .mailFailed(messageID: 9, kind: "k", attempts: 3, email: address),
            .userProfileUpdated(uid: "u", fields: ["displayName", "attributes"]),
        ]
        for event in events {
            let body = event.body(at: 1_764_583_200)
            let parsed = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
            #expect(body == (try Self.encoderText(parsed)))
            guard case .object(let envelope) = parsed else { Issue.record("not an object: \(body)"); continue }
            #expect(envelope["type"] == .string(event.type))
        }
    }
}
