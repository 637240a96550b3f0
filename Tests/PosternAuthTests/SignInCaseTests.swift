import Foundation
import PosternAPI
import Testing
@testable import PosternAuth

/// RxFireAuth's five cases (API.md's table), migration both ways and
/// `resetToAnonymousOnFailure`, through the client against a real `postern serve`.
@Suite("sign-in cases against a real server")
struct SignInCaseTests {
    /// Signs a fresh device in with an email link to `email`, returning the device.
    static func signedIn(_ server: LiveServer, _ email: String) async throws -> PosternAuth {
        let device = server.device()
        let before = server.mails(to: email).count
        try await device.sendSignInLink(to: email)
        let mail = try await server.newMail(to: email, after: before)
        try await device.handle(pasted: mail)
        return device
    }

    @Test("no session, new address: the account is created, isNewUser")
    func noSessionNewAddress() async throws {
        let server = try await LiveServer()
        let device = server.device()
        try await device.sendSignInLink(to: "new@example.org")
        let login = try await device.handle(pasted: try await server.mail(to: "new@example.org"))
        #expect(login.isNewUser)
        #expect(login.email == "new@example.org")
        #expect(login.allowMigration == nil && login.oldUserId == nil)
        #expect(device.user?.uid == login.uid)
        #expect(device.user?.isAnonymous == false)
        #expect(device.user?.isEmailVerified == true)
        // Signing in again to the same address: an existing account, not new.
        await device.signOut()
        #expect(device.user == nil)
        try await device.sendSignInLink(to: "new@example.org")
        let again = try await device.handle(pasted: try await server.mail(to: "new@example.org", number: 2))
        #expect(!again.isNewUser && again.uid == login.uid)
    }

    @Test("anonymous session, new address: the guest account keeps its uid and gets the address")
    func anonymousNewAddress() async throws {
        let server = try await LiveServer()
        let device = server.device()
        let guest = try await device.signInAnonymously()
        #expect(guest.isAnonymous)
        try await device.sendSignInLink(to: "guest@example.org")
        let login = try await device.handle(pasted: try await server.mail(to: "guest@example.org"))
        #expect(login.uid == guest.uid && login.isNewUser)
        #expect(login.allowMigration == nil)
        #expect(login.oldUserId == guest.uid && login.newUserId == guest.uid)
        #expect(device.user?.isAnonymous == false && device.user?.email == "guest@example.org")
    }

    @Test("anonymous session, existing address: migrationRequired, then allowMigration true moves to the account")
    func anonymousExistingAllow() async throws {
        let server = try await LiveServer()
        let owner = try await Self.signedIn(server, "owner@example.org")
        let ownerUid = try #require(owner.user?.uid)

        let device = server.device()
        let guest = try await device.signInAnonymously()
        try await device.sendSignInLink(to: "owner@example.org")
        let mail = try await server.mail(to: "owner@example.org", number: 2)
        let error = await #expect(throws: PosternAuthError.self) { try await device.handle(pasted: mail) }
        guard case .migrationRequired(let required)? = error else {
            Issue.record("want migrationRequired, got \(String(describing: error))")
            return
        }
        #expect(required.anonymousUid == guest.uid)
        #expect(device.user?.uid == guest.uid, "nothing changed on this device yet")

        let login = try await device.login(with: required.credentials, allowMigration: true)
        #expect(login.uid == ownerUid && !login.isNewUser)
        #expect(login.allowMigration == true)
        #expect(login.oldUserId == guest.uid && login.newUserId == ownerUid)
        #expect(device.user?.uid == ownerUid)
    }

    @Test("anonymous session, existing address: allowMigration false signs in without moving data")
    func anonymousExistingRefuse() async throws {
        let server = try await LiveServer()
        let owner = try await Self.signedIn(server, "keep@example.org")
        let device = server.device()
        let guest = try await device.signInAnonymously()
        try await device.sendSignInLink(to: "keep@example.org")
        let mail = try await server.mail(to: "keep@example.org", number: 2)
        let login = try await device.login(with: .emailLink(mail), allowMigration: false)
        #expect(login.uid == owner.user?.uid)
        #expect(login.allowMigration == false)
        #expect(login.oldUserId == guest.uid)
    }

    @Test("normal account, address with no account: the address is linked to it")
    func normalAccountNewAddress() async throws {
        let server = try await LiveServer()
        let device = server.device()
        let guest = try await device.signInAnonymously()
        try await device.signUp(email: "first@example.org", password: "correct horse battery staple")
        _ = try await device.handle(pasted: try await server.mail(to: "first@example.org"))
        #expect(device.user?.uid == guest.uid && device.user?.isAnonymous == false)
        try await device.sendSignInLink(to: "second@example.org")
        let login = try await device.handle(pasted: try await server.mail(to: "second@example.org"))
        #expect(login.uid == guest.uid)
    }

    @Test("normal account, its own address: reauthentication keeps the uid")
    func normalAccountSameAddress() async throws {
        let server = try await LiveServer()
        let device = try await Self.signedIn(server, "same@example.org")
        let uid = try #require(device.user?.uid)
        let tokenBefore = try await device.idToken()
        try await device.sendSignInLink(to: "same@example.org")
        let login = try await device.handle(pasted: try await server.mail(to: "same@example.org", number: 2))
        #expect(login.uid == uid && !login.isNewUser)
        #expect(try await device.idToken() != tokenBefore)
    }

    @Test("normal account, another account's address: credentialAlreadyInUse, and the session stays")
    func normalAccountOtherAccount() async throws {
        let server = try await LiveServer()
        _ = try await Self.signedIn(server, "other@example.org")
        let device = try await Self.signedIn(server, "me@example.org")
        let uid = device.user?.uid
        try await device.sendSignInLink(to: "other@example.org")
        let mail = try await server.mail(to: "other@example.org", number: 2)
        await #expect(throws: PosternAuthError.credentialAlreadyInUse) { try await device.handle(pasted: mail) }
        #expect(device.user?.uid == uid)
    }

    @Test("resetToAnonymousOnFailure: a failed login leaves a fresh guest session")
    func resetToAnonymous() async throws {
        let server = try await LiveServer()
        let device = try await Self.signedIn(server, "reset@example.org")
        let uid = device.user?.uid
        await #expect(throws: PosternAuthError.invalidLoginCredentials) {
            try await device.login(with: .password(email: "reset@example.org", password: "wrong password here"), resetToAnonymousOnFailure: true)
        }
        #expect(device.user?.isAnonymous == true)
        #expect(device.user?.uid != uid)
        // Without the flag the session is left alone.
        let before = device.user?.uid
        await #expect(throws: PosternAuthError.invalidLoginCredentials) {
            try await device.login(with: .password(email: "reset@example.org", password: "wrong password here"))
        }
        #expect(device.user?.uid == before)
    }

    @Test("the 6-digit code typed on a second device signs that device in; the link asked for elsewhere needs the address")
    func secondDevice() async throws {
        let server = try await LiveServer()
        let phone = server.device()
        try await phone.sendSignInLink(to: "two@example.org")
        let mail = try await server.mail(to: "two@example.org")
        let laptop = server.device()
        // The link pasted on a device that did not ask: PKCE wants the address.
        await #expect(throws: PosternAuthError.invalidCodeVerifier) { try await laptop.handle(pasted: mail) }
        let code = try LiveServer.sixDigits(mail)
        await #expect(throws: PosternAuthError.invalidCode) {
            try await laptop.login(with: .emailCode(email: "two@example.org", code: code == "000000" ? "111111" : "000000"))
        }
        let login = try await laptop.login(with: .emailCode(email: "two@example.org", code: code))
        #expect(login.isNewUser && laptop.user?.email == "two@example.org")
        #expect(phone.user == nil, "the asking device is not signed in by the other one")
    }

    @Test("a PKCE link pasted on another device does not complete there, even with its address; on the asking device it does")
    func linkOnOtherDeviceWithAddress() async throws {
        let server = try await LiveServer()
        let phone = server.device()
        try await phone.sendSignInLink(to: "paste@example.org")
        let mail = try await server.mail(to: "paste@example.org")
        let laptop = server.device()
        await #expect(throws: PosternAuthError.invalidCodeVerifier) {
            try await laptop.login(with: .emailLink(mail, email: "paste@example.org"))
        }
        await #expect(throws: PosternAuthError.emailMismatch) {
            try await phone.login(with: .emailLink(mail, email: "someone.else@example.org"))
        }
        let login = try await phone.login(with: .emailLink(mail, email: "paste@example.org"))
        #expect(login.email == "paste@example.org")
    }
}
