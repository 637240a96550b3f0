import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import Testing

@Suite("Wire bodies")
struct WireBodyTests {
    func object(_ bytes: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    @Test("a LoginDescriptor's body carries the migration record and explicit nulls, and decodes back")
    func login() throws {
        let session = Session(uid: "u2", idToken: "t", refreshToken: "r", expiresIn: 3600, isAnonymous: false, email: nil)
        let login = LoginDescriptor(
            uid: "u2", email: nil, isNewUser: false, session: session,
            migration: .init(fromUid: "u1", toUid: "u2", allowMigration: true), needsPassword: false)
        let bytes = APIJSON.encode(LoginBody(login))
        let json = object(bytes)
        #expect(json["email"] is NSNull)
        #expect((json["session"] as? [String: Any])?["email"] is NSNull)
        #expect((json["migration"] as? [String: Any])?["fromUid"] as? String == "u1")
        #expect(json["needsPassword"] as? Bool == false)
        #expect(try APIJSON.decode(LoginBody.self, from: bytes) == LoginBody(login))
        var plain = login
        plain.migration = nil
        #expect(object(APIJSON.encode(LoginBody(plain)))["migration"] is NSNull)
    }

    @Test("a user's body carries its attributes as JSON, numbers and nesting kept")
    func user() throws {
        let address = try EmailAddress.parse("a@example.com")
        var account = Account(uid: "u1", email: address, createdAt: 0)
        account.attributes = #"{"bio":"hi","age":42,"ratio":0.5,"tags":["a",true,null],"nested":{"x":1}}"#
        let json = object(APIJSON.encode(UserBody(UserRecord(account))))
        let attributes = try #require(json["attributes"] as? [String: Any])
        #expect(attributes["bio"] as? String == "hi")
        #expect((attributes["age"] as? NSNumber)?.int64Value == 42)
        #expect((attributes["ratio"] as? NSNumber)?.doubleValue == 0.5)
        #expect((attributes["nested"] as? [String: Any])?["x"] as? Int == 1)
        #expect(json["displayName"] is NSNull && json["lastSignInAt"] is NSNull)
        #expect(json["createdAt"] as? String == "1970-01-01T00:00:00Z")
        #expect(String(decoding: APIJSON.encode(UserBody(UserRecord(account))), as: UTF8.self).contains(#""age":42"#))
    }
}

@Suite("PATCH fields")
struct PatchFieldTests {
    @Test("absent leaves a field, null clears it, a value sets it")
    func triState() throws {
        func decode(_ text: String) throws -> ProfilePatchBody { try APIJSON.decode(ProfilePatchBody.self, from: Array(text.utf8)) }
        #expect(try decode("{}").displayName == .unchanged)
        #expect(try decode(#"{"displayName":null}"#).displayName == .null)
        #expect(try decode(#"{"displayName":"Ann"}"#).displayName == .value("Ann"))
        #expect(try decode(#"{"displayName":null}"#).displayName.change == .some(nil))
        #expect(try decode("{}").displayName.change == nil)
        #expect(throws: DecodingError.self) { try decode(#"{"displayName":7}"#) }
        let admin = try APIJSON.decode(AdminUserPatchBody.self, from: Array(#"{"disabled":true}"#.utf8))
        #expect(admin.disabled == true && admin.emailVerified == nil && admin.displayName == .unchanged)
    }
}
