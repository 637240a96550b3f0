import Foundation
import PosternAPI
import Testing
@testable import PosternAuth

/// Sign in with Apple, Google and other OpenID providers through the client, against a
/// `StubServer` that answers as the API contract says: the requests' paths and bodies, the
/// migration retry, linking and unlinking, and the provider errors. (Against a real daemon they
/// need an identity provider on https: Tests/integration runs those.)
@Suite("identity providers in the client, against a stubbed server")
struct ProviderClientTests {
    static let ada: PersonNameComponents = {
        var name = PersonNameComponents()
        name.givenName = "Ada"
        name.familyName = "Lovelace"
        return name
    }()
    static let apple = Credentials.apple(idToken: "apple-token", rawNonce: "raw-nonce", fullName: ada)

    /// The uid a stub session's ID token names (`id-token-<uid>`, `fresh-<uid>`).
    static func uid(of bearer: String?) -> String { String(bearer?.split(separator: "-").last ?? "nobody") }

    /// A server where the guest `guest` and provider sign-ins land in `signedIn`; `/v1/me`
    /// answers the uid of the bearer with `providers`.
    static func server(signedIn: String = "guest", providers: [String] = ["apple"]) -> StubServer {
        StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/accounts/anonymous"): .ok(StubServer.session("guest", anonymous: true))
            case ("POST", "/v1/provider/sign-in"): .ok(StubServer.login(signedIn, isNewUser: true))
            case ("GET", "/v1/me"): .ok(StubServer.user(uid(of: request.bearer), providers: providers))
            default: .error(404, .notFound)
            }
        }
    }

    @Test("a guest signing in with Apple: provider apple, the raw nonce, the guest's token, the name formatted; same uid")
    func appleUpgradesGuest() async throws {
        let server = Self.server()
        let device = server.device()
        try await device.signInAnonymously()
        let login = try await device.login(with: Self.apple)
        #expect(login.uid == "guest" && login.isNewUser && login.oldUserId == "guest" && login.newUserId == "guest")
        let signIn = try #require(server.requests.first { $0.path == "/v1/provider/sign-in" })
        #expect(signIn.method == "POST" && signIn.bearer == nil)
        #expect(try signIn.decode(ProviderSignInBody.self) == ProviderSignInBody(
            provider: "apple", providerIdToken: "apple-token", nonce: "raw-nonce", idToken: "id-token-guest", displayName: "Ada Lovelace"))
        #expect(device.user?.providers == ["apple"] && device.user?.isAnonymous == false)
        #expect(server.requests.last?.path == "/v1/me", "the user is reloaded after the sign-in")
    }

    @Test("each provider credential's body: Google, a generic provider with and without nonce, Apple without a name", arguments: [
        (Credentials.google(idToken: "g"), ProviderSignInBody(provider: "google", providerIdToken: "g")),
        (.provider("acme", idToken: "t", nonce: "n-1"), ProviderSignInBody(provider: "acme", providerIdToken: "t", nonce: "n-1")),
        (.provider("oidc:acme", idToken: "t"), ProviderSignInBody(provider: "oidc:acme", providerIdToken: "t")),
        (.apple(idToken: "a", rawNonce: "r", fullName: PersonNameComponents()), ProviderSignInBody(provider: "apple", providerIdToken: "a", nonce: "r")),
        (.apple(idToken: "a", rawNonce: "r", fullName: nil), ProviderSignInBody(provider: "apple", providerIdToken: "a", nonce: "r")),
    ])
    func bodies(credentials: Credentials, want: ProviderSignInBody) async throws {
        let server = Self.server(signedIn: "ada")
        let device = server.device()
        let login = try await device.login(with: credentials)
        #expect(login.uid == "ada" && login.oldUserId == nil)
        #expect(server.requests.map(\.path) == ["/v1/provider/sign-in", "/v1/me"])
        #expect(try server.requests[0].decode(ProviderSignInBody.self) == want)
    }

    @Test("MIGRATION_REQUIRED carries the Apple credentials; the retry sends the same token with allowMigration")
    func migrationRetry() async throws {
        let server = StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/accounts/anonymous"): return .ok(StubServer.session("guest", anonymous: true))
            case ("POST", "/v1/provider/sign-in"):
                guard let body = try? request.decode(ProviderSignInBody.self), let allow = body.allowMigration else {
                    return .error(409, .migrationRequired, anonymousUid: "guest")
                }
                return .ok(StubServer.login("holder", isNewUser: false, migration: .init(fromUid: "guest", toUid: "holder", allowMigration: allow)))
            case ("GET", "/v1/me"): return .ok(StubServer.user(Self.uid(of: request.bearer), providers: ["apple"]))
            default: return .error(404, .notFound)
            }
        }
        let device = server.device()
        try await device.signInAnonymously()
        let required: PosternAuthError.MigrationRequired
        do {
            try await device.login(with: Self.apple)
            Issue.record("expected migrationRequired")
            return
        } catch {
            guard case .migrationRequired(let question) = error else { Issue.record("got \(error)"); return }
            required = question
        }
        #expect(required.credentials == Self.apple && required.anonymousUid == "guest")
        #expect(device.user?.uid == "guest", "the guest stays signed in while the user decides")
        let login = try await device.login(with: required.credentials, allowMigration: true)
        #expect(login.uid == "holder" && login.oldUserId == "guest" && login.newUserId == "holder" && login.allowMigration == true)
        let sent = try server.requests.filter { $0.path == "/v1/provider/sign-in" }.map { try $0.decode(ProviderSignInBody.self) }
        #expect(sent.count == 2)
        var retried = try #require(sent.first)
        retried.allowMigration = true
        #expect(sent.last == retried, "the same token, nonce, name and guest session, now with allowMigration")
        #expect(device.user?.uid == "holder")
    }

    @Test("confirmAuthentication with Google takes the fresh session; another account's identity is credentialAlreadyInUse")
    func reauthenticate() async throws {
        let server = StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/provider/sign-in"):
                let body = try? request.decode(ProviderSignInBody.self)
                return switch body?.providerIdToken {
                case "first": .ok(StubServer.login("ada", isNewUser: true))
                case "again": .ok(StubServer.login("ada", isNewUser: false, token: "fresh"))
                default: .ok(StubServer.login("other", isNewUser: false, token: "other"))
                }
            case ("GET", "/v1/me"): return .ok(StubServer.user(Self.uid(of: request.bearer), providers: ["google"]))
            default: return .error(404, .notFound)
            }
        }
        let device = server.device()
        await #expect(throws: PosternAuthError.notSignedIn) { try await device.confirmAuthentication(with: .google(idToken: "again")) }
        #expect(server.requests.isEmpty)
        try await device.login(with: .google(idToken: "first"))
        try await device.confirmAuthentication(with: .google(idToken: "again"))
        let confirm = try server.requests.last.map { try $0.decode(ProviderSignInBody.self) }
        #expect(confirm == ProviderSignInBody(provider: "google", providerIdToken: "again", idToken: "id-token-ada"))
        #expect(try await device.idToken() == "fresh-ada")
        await #expect(throws: PosternAuthError.credentialAlreadyInUse) { try await device.confirmAuthentication(with: .google(idToken: "mallory")) }
        #expect(try await device.idToken() == "fresh-ada", "the session stays the signed-in account's")
    }

    @Test("link(with:) posts the provider's token with the session's bearer; the user is refreshed and broadcast")
    func link() async throws {
        let server = StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/provider/sign-in"): .ok(StubServer.login("ada", isNewUser: true))
            case ("GET", "/v1/me"): .ok(StubServer.user("ada", providers: ["google"]))
            case ("POST", "/v1/me/providers"): .ok(StubServer.user("ada", providers: ["google", "apple"]))
            default: .error(404, .notFound)
            }
        }
        let device = server.device()
        try await device.login(with: .google(idToken: "g"))
        var updates = device.userUpdates.makeAsyncIterator()
        #expect(await updates.next()??.providers == ["google"])
        let user = try await device.link(with: Self.apple)
        #expect(user.providers == ["google", "apple"] && device.user?.providers == ["google", "apple"])
        #expect(await updates.next()??.providers == ["google", "apple"])
        let request = try #require(server.requests.last)
        #expect(request.method == "POST" && request.path == "/v1/me/providers" && request.bearer == "id-token-ada")
        #expect(try request.decode(LinkProviderBody.self) == LinkProviderBody(provider: "apple", providerIdToken: "apple-token", nonce: "raw-nonce"))

        let sent = server.requests.count
        for credentials in [Credentials.password(email: "ada@example.org", password: "pw"), .emailCode(email: "ada@example.org", code: "123456")] {
            do {
                try await device.link(with: credentials)
                Issue.record("expected invalidArgument")
            } catch {
                guard case .invalidArgument = error else { Issue.record("got \(error)"); continue }
            }
        }
        #expect(server.requests.count == sent, "nothing is sent for credentials that are no provider's")
    }

    @Test("unlink(provider:) deletes /v1/me/providers/{provider}; a name that is no provider's is refused before sending")
    func unlink() async throws {
        let server = StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/provider/sign-in"): .ok(StubServer.login("ada", isNewUser: true))
            case ("GET", "/v1/me"): .ok(StubServer.user("ada", providers: ["emailLink", "oidc:acme"]))
            case ("DELETE", "/v1/me/providers/oidc:acme"): .ok(StubServer.user("ada", providers: ["emailLink"]))
            default: .error(404, .notFound)
            }
        }
        let device = server.device()
        try await device.login(with: .provider("acme", idToken: "t"))
        let user = try await device.unlink(provider: "oidc:acme")
        #expect(user.providers == ["emailLink"] && device.user?.providers == ["emailLink"])
        let request = try #require(server.requests.last)
        #expect(request.method == "DELETE" && request.bearer == "id-token-ada" && request.body.isEmpty)
        let sent = server.requests.count
        for name in ["", "oidc:", "Apple", "../me", "apple/x", "oidc:acme?x=1", String(repeating: "a", count: 33)] {
            do {
                try await device.unlink(provider: name)
                Issue.record("expected invalidArgument for \(name)")
            } catch {
                guard case .invalidArgument = error else { Issue.record("got \(error) for \(name)"); continue }
            }
        }
        #expect(server.requests.count == sent)
    }

    /// Which call meets an error code.
    enum Call: Sendable { case login, link, unlink }

    @Test("the provider error codes reach the app as their own cases", arguments: [
        (APIErrorCode.invalidProviderToken, 400, Call.login, PosternAuthError.invalidProviderToken),
        (.providerNotConfigured, 400, .login, .providerNotConfigured),
        (.accountExistsWithDifferentCredential, 409, .login, .accountExistsWithDifferentCredential),
        (.invalidProviderToken, 400, .link, .invalidProviderToken),
        (.providerAlreadyLinked, 409, .link, .providerAlreadyLinked),
        (.credentialAlreadyInUse, 409, .link, .credentialAlreadyInUse),
        (.requiresRecentLogin, 403, .link, .requiresRecentLogin),
        (.providerNotLinked, 404, .unlink, .providerNotLinked),
        (.lastSignInMethod, 409, .unlink, .lastSignInMethod),
        (.requiresRecentLogin, 403, .unlink, .requiresRecentLogin),
    ])
    func errors(code: APIErrorCode, status: Int, call: Call, want: PosternAuthError) async throws {
        let server = StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/accounts/anonymous"): .ok(StubServer.session("guest", anonymous: true))
            case ("GET", "/v1/me"): .ok(StubServer.user("guest", providers: ["anonymous"], anonymous: true))
            default: .error(status, code)
            }
        }
        let device = server.device()
        try await device.signInAnonymously()
        await #expect(throws: want) {
            switch call {
            case .login: try await device.login(with: Self.apple)
            case .link: try await device.link(with: .google(idToken: "g"))
            case .unlink: try await device.unlink(provider: "google")
            }
        }
        #expect(device.user?.uid == "guest", "a refused provider leaves the session as it was")
    }

    @Test("SignInNonce: hashed is the lower-case hex SHA-256 of raw; make() gives a new 43-character raw each time")
    func nonce() throws {
        // printf n-123 | sha256sum
        let known = try #require(SignInNonce(raw: "n-123"))
        #expect(known.raw == "n-123" && known.hashed == "c59657b376f00dd2df83c95f23185b0667a1e3c3980c735512c452f136cb383a")
        let made = try #require(SignInNonce.make())
        #expect(made.raw.count == 43 && made.raw != SignInNonce.make()?.raw)
        #expect(made.hashed == SignInNonce(raw: made.raw)?.hashed)
        #expect(made.hashed.allSatisfy { "0123456789abcdef".contains($0) } && made.hashed.count == 64)
    }

    @Test("Apple's name becomes one line; an empty one (Apple's later sign-ins) none")
    func displayName() {
        #expect(Credentials.displayName(of: Self.ada) == "Ada Lovelace")
        var given = PersonNameComponents()
        given.givenName = "  Ada "
        #expect(Credentials.displayName(of: given) == "Ada")
        #expect(Credentials.displayName(of: PersonNameComponents()) == nil)
        var long = PersonNameComponents()
        long.givenName = String(repeating: "é", count: 300)
        #expect(Credentials.displayName(of: long)?.unicodeScalars.count == WireLimits.displayNameMaximumLength)
    }
}
