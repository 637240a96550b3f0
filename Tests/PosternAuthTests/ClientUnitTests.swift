import Foundation
import PosternAPI
import Testing
@testable import PosternAuth

@Suite("client pieces without a server")
struct ClientUnitTests {
    /// What each code of the catalogue becomes; a code added to the catalogue fails here until
    /// the table (and the client) say what it is.
    static let expected: [APIErrorCode: PosternAuthError] = [
        .invalidArgument: .invalidArgument("m"), .badRequest: .protocolMismatch(status: 400, code: "BAD_REQUEST", message: "m"),
        .invalidEmail: .invalidEmail, .invalidOOBCode: .invalidCode, .expiredOOBCode: .expiredCode, .emailMismatch: .emailMismatch,
        .linkUsed: .linkUsed(signedInHere: false), .linkSuperseded: .linkSuperseded, .linkOtherBrowser: .linkOtherBrowser,
        .invalidCodeVerifier: .invalidCodeVerifier, .invalidContinueURI: .invalidContinueURL,
        .weakPassword: .weakPassword(rule: "minimumLength", message: "m"), .invalidLoginCredentials: .invalidLoginCredentials,
        .userDisabled: .userDisabled, .invalidPhoneNumber: .invalidPhoneNumber, .smsCountryNotAllowed: .smsCountryNotAllowed, .invalidRefreshToken: .invalidRefreshToken, .tokenRevoked: .tokenRevoked,
        .invalidIDToken: .invalidIDToken, .requiresRecentLogin: .requiresRecentLogin,
        .unauthorized: .operatorOnly(code: "UNAUTHORIZED", message: "m"), .notFound: .protocolMismatch(status: 400, code: "NOT_FOUND", message: "m"),
        .userNotFound: .userNotFound, .anonymousAccount: .anonymousAccount,
        .invalidPhoneCode: .invalidPhoneCode, .phoneClaimNotFound: .phoneClaimNotFound, .sessionNotFound: .sessionNotFound,
        .phoneClaimState: .phoneClaimState("m"),
        .phoneSignInDisabled: .phoneSignInDisabled, .signUpNotAllowed: .signUpNotAllowed, .methodNotAllowed: .protocolMismatch(status: 400, code: "METHOD_NOT_ALLOWED", message: "m"),
        .migrationRequired: .migrationRequired(.init(credentials: .emailCode(email: "a@b.c", code: "123456"), anonymousUid: "anon")),
        .credentialAlreadyInUse: .credentialAlreadyInUse, .linkOtherSession: .linkOtherSession, .emailExists: .emailExists, .notDead: .operatorOnly(code: "NOT_DEAD", message: "m"),
        .payloadTooLarge: .protocolMismatch(status: 400, code: "PAYLOAD_TOO_LARGE", message: "m"),
        .unsupportedMediaType: .protocolMismatch(status: 400, code: "UNSUPPORTED_MEDIA_TYPE", message: "m"),
        .tooManyAttempts: .tooManyAttempts(retryAfter: 30), .internalFailure: .internalFailure, .unavailable: .unavailable,
        .invalidProviderToken: .invalidProviderToken, .providerNotConfigured: .providerNotConfigured,
        .accountExistsWithDifferentCredential: .accountExistsWithDifferentCredential, .providerAlreadyLinked: .providerAlreadyLinked,
        .providerNotLinked: .providerNotLinked, .lastSignInMethod: .lastSignInMethod,
        .challengeRequired: .challengeRequired(kind: "altcha", siteKey: nil),
        .hookDenied: .signInRefused(message: "m"), .hookFailed: .signInCheckFailed,
    ]

    @Test("LINK_USED with signedInHere is 'already signed in here'; without it, a used link")
    func linkUsedHere() {
        let here = ErrorBody.Detail(code: "LINK_USED", message: "m", signedInHere: "true")
        #expect(PosternAuthError.from(status: 400, detail: here) == .linkUsed(signedInHere: true))
        #expect(PosternAuthError.from(status: 400, detail: .init(code: "LINK_USED", message: "m")) == .linkUsed(signedInHere: false))
        #expect(PosternAuthError.linkUsed(signedInHere: true).errorDescription?.hasPrefix("You are already signed in") == true)
    }

    @Test("every server error code maps to its own client error", arguments: APIErrorCode.allCases)
    func errorTable(code: APIErrorCode) throws {
        let want = try #require(Self.expected[code], "\(code.rawValue) has no row in the table")
        let detail = ErrorBody.Detail(code: code.rawValue, message: "m", anonymousUid: "anon", rule: "minimumLength")
        let got = PosternAuthError.from(
            status: 400, detail: detail, credentials: .emailCode(email: "a@b.c", code: "123456"), retryAfter: 30)
        #expect(got == want)
        #expect(!(got.errorDescription ?? "").isEmpty)
        #expect(!(got.errorDescription ?? "").contains("123456"), "no credential in a message")
    }

    @Test("the table has no two codes on one client error but the protocol-level ones")
    func distinct() {
        let specific = Self.expected.values.filter {
            if case .protocolMismatch = $0 { return false }
            if case .operatorOnly = $0 { return false }
            return true
        }
        #expect(Set(specific).count == specific.count)
    }

    @Test("an unknown code, or MIGRATION_REQUIRED without its uid, is a protocol mismatch")
    func unknownCodes() {
        #expect(PosternAuthError.from(status: 418, detail: .init(code: "TEAPOT", message: "m")) == .protocolMismatch(status: 418, code: "TEAPOT", message: "m"))
        #expect(PosternAuthError.from(status: 409, detail: .init(code: "MIGRATION_REQUIRED", message: "m"))
            == .protocolMismatch(status: 409, code: "MIGRATION_REQUIRED", message: "m"))
    }

    @Test("canHandle accepts this server's sign-in links only")
    func canHandle() {
        let auth = PosternAuth(configuration: .init(serverURL: URL(string: "https://auth.example.com")!, storage: MemorySessionStorage()))
        #expect(auth.canHandle(URL(string: "https://auth.example.com/action?mode=signIn&oobCode=abc")!))
        #expect(auth.canHandle(URL(string: "https://AUTH.example.com/action?oobCode=abc&mode=signIn&lang=de")!))
        #expect(!auth.canHandle(URL(string: "https://auth.example.com/action?mode=resetPassword&oobCode=abc")!))
        #expect(!auth.canHandle(URL(string: "https://auth.example.com/action?mode=signIn")!))
        #expect(!auth.canHandle(URL(string: "https://evil.example.net/action?mode=signIn&oobCode=abc")!))
        #expect(!auth.canHandle(URL(string: "https://auth.example.com/other?mode=signIn&oobCode=abc")!))
    }

    @Test("PKCE: a 43-character verifier, a SHA-256 that matches FIPS 180-2's vector, base64url without padding")
    func pkce() throws {
        let pair = try #require(PKCE.make())
        #expect(pair.verifier.count == 43 && pair.challenge.count == 43)
        #expect(pair.verifier != PKCE.make()?.verifier)
        #expect(!pair.verifier.contains { "+/=".contains($0) })
        let digest = try #require(SHA256Digest.of(Array("abc".utf8)))
        #expect(digest.map { String(format: "%02x", $0) }.joined() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(PKCE.base64URL(digest) == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0")
        #expect(pair.challenge == PKCE.base64URL(try #require(SHA256Digest.of(Array(pair.verifier.utf8)))))
    }

    @Test("the file storage writes 0600 and reads back; a corrupt file is nothing stored")
    func fileStorage() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-storage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = FileSessionStorage(url: directory.appendingPathComponent("s/session.json"))
        #expect(try storage.load() == nil)
        let state = DeviceState(lastEmail: "a@example.org", passwordEmails: ["a@example.org"])
        try storage.save(state)
        try storage.save(state)
        #expect(try storage.load() == state)
        let mode = try FileManager.default.attributesOfItem(atPath: storage.url.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        try Data("{not json".utf8).write(to: storage.url)
        #expect(try storage.load() == nil)
    }
}
