import Foundation
import PosternAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import PosternAuth

/// A clock the tests move: the client's view of time, not the server's.
final class TestClock: @unchecked Sendable {
    // `lock` guards `offset`.
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    func advance(_ seconds: TimeInterval) { lock.withLock { offset += seconds } }
    var now: Date { lock.withLock { Date().addingTimeInterval(offset) } }
}

@Suite("the account lifecycle against a real server")
struct LifecycleTests {
    @Test("reauthentication, then a password change: the new password signs in, the old one does not")
    func reauthenticateThenChangePassword() async throws {
        let server = try await LiveServer()
        let device = try await SignInCaseTests.signedIn(server, "pw@example.org")
        await #expect(throws: PosternAuthError.self) { try await device.updatePassword("short") }
        try await device.confirmAuthentication(with: .emailCode(
            email: "pw@example.org", code: try await {
                try await device.sendSignInLink(to: "pw@example.org")
                return try LiveServer.sixDigits(try await server.mail(to: "pw@example.org", number: 2))
            }()))
        try await device.updatePassword("a long enough first password")
        #expect(device.user?.providers.contains("password") == true)
        let other = server.device()
        let login = try await other.login(with: .password(email: "pw@example.org", password: "a long enough first password"))
        #expect(login.uid == device.user?.uid)
        // The device that changed it keeps its session; reauthenticate with the password now.
        try await device.confirmAuthentication(with: .password(email: "pw@example.org", password: "a long enough first password"))
        try await device.updatePassword("a long enough second password")
        await #expect(throws: PosternAuthError.invalidLoginCredentials) {
            try await server.device().login(with: .password(email: "pw@example.org", password: "a long enough first password"))
        }
        // Reauthenticating as someone else is refused and changes nothing.
        _ = try await SignInCaseTests.signedIn(server, "stranger@example.org")
        try await device.sendSignInLink(to: "stranger@example.org")
        let strangerMail = try await server.mail(to: "stranger@example.org", number: 2)
        await #expect(throws: PosternAuthError.credentialAlreadyInUse) {
            try await device.confirmAuthentication(with: .emailLink(strangerMail))
        }
        #expect(device.user?.email == "pw@example.org")
    }

    @Test("a reset through the mailed link: the new password works and the old sessions end")
    func resetThroughLink() async throws {
        let server = try await LiveServer()
        let device = server.device()
        try await device.signUp(email: "forgot@example.org", password: "the original password")
        _ = try await device.handle(pasted: try await server.mail(to: "forgot@example.org"))
        let signedIn = server.device()
        try await signedIn.login(with: .password(email: "forgot@example.org", password: "the original password"))

        try await device.resetPassword(for: "forgot@example.org")
        try await device.resetPassword(for: "nobody-here@example.org")  // the same answer
        let mail = try await server.mail(to: "forgot@example.org", number: 2)
        let info = try await device.inspect(mail)
        #expect(info.mode == "resetPassword")
        await #expect(throws: PosternAuthError.self) { try await device.confirmPasswordReset(mail, newPassword: "x") }
        try await device.confirmPasswordReset(mail, newPassword: "the replacement password")
        #expect(device.user == nil, "this device's session ended with the reset")
        await #expect(throws: PosternAuthError.tokenRevoked) { _ = try await signedIn.idToken(forceRefresh: true) }
        #expect(signedIn.user == nil)
        try await server.device().login(with: .password(email: "forgot@example.org", password: "the replacement password"))
        await #expect(throws: PosternAuthError.linkUsed(signedInHere: false)) { try await device.confirmPasswordReset(mail, newPassword: "yet another password") }
    }

    @Test("a change of address: the new address gets the link; completing it moves the account and ends its sessions, this device's too")
    func changeOfAddress() async throws {
        let server = try await LiveServer()
        let device = try await SignInCaseTests.signedIn(server, "old@example.org")
        let uid = try #require(device.user?.uid)
        let updates = device.userUpdates
        try await device.updateEmail("new-home@example.org")
        let applied = try await device.applyActionLink(try await server.mail(to: "new-home@example.org"))
        #expect(applied.mode == "verifyAndChangeEmail")
        // Every session ended: an ID token said the old address, which is free for others now.
        #expect(device.user == nil, "this device's session ended with the change")
        let again = try await SignInCaseTests.signedIn(server, "new-home@example.org")
        #expect(again.user?.uid == uid && again.user?.email == "new-home@example.org")
        // The old address was told, with a link that undoes it.
        let notice = try await server.mail(to: "old@example.org", number: 2)
        #expect(try await device.inspect(notice).mode == "recoverEmail")
        var seen: [String?] = []
        for await user in updates {
            seen.append(user?.email)
            if user == nil { break }
        }
        #expect(seen.first == "old@example.org" && seen.last == .some(nil))
    }

    @Test("20 concurrent idToken() calls around expiry reach the server as one refresh")
    func sharedRefresh() async throws {
        let metricsPort = try LiveServer.freePort()
        let server = try await LiveServer(["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        let clock = TestClock()
        let device = server.device(now: { clock.now })
        try await device.signInAnonymously()
        let first = try await device.idToken()
        #expect(try await refreshes(metricsPort) == 0)
        clock.advance(3600)  // past the ID token's expiry, by the device's clock
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await device.idToken() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1 && !tokens.contains(first))
        #expect(try await refreshes(metricsPort) == 1)
        // Fresh now: no more refreshes.
        _ = try await device.idToken()
        #expect(try await refreshes(metricsPort) == 1)
    }

    /// `POST /v1/token` answers counted by the daemon's metrics.
    func refreshes(_ port: Int) async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        let text = String(decoding: data, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("postern_http_requests_total{") && $0.contains(#"route="/v1/token""#) }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test("a revoked family signs the device out and userUpdates yields nil")
    func revokedFamily() async throws {
        let server = try await LiveServer()
        let storage = MemorySessionStorage()
        let device = PosternAuth(configuration: .init(serverURL: server.url, storage: storage))
        try await device.signInAnonymously()
        // A thief copies the stored session and uses it twice.
        let thief = PosternAuth(configuration: .init(serverURL: server.url, storage: MemorySessionStorage(try storage.load())))
        _ = try await thief.idToken(forceRefresh: true)
        _ = try await thief.idToken(forceRefresh: true)
        var updates = device.userUpdates.makeAsyncIterator()
        #expect(await updates.next() != nil)
        await #expect(throws: PosternAuthError.tokenRevoked) { _ = try await device.idToken(forceRefresh: true) }
        #expect(device.user == nil)
        #expect(await updates.next() == .some(nil))
        #expect(try storage.load()?.session == nil, "the stored session is gone too")
        // The family is dead for the thief as well.
        await #expect(throws: PosternAuthError.tokenRevoked) { _ = try await thief.idToken(forceRefresh: true) }
    }

    @Test("profile: name and attributes are saved, read back and yielded; delete signs out")
    func profile() async throws {
        let server = try await LiveServer()
        let device = try await SignInCaseTests.signedIn(server, "profile@example.org")
        let user = try await device.updateProfile(displayName: .value("Ada"), attributes: ["bio": .string("Counts things."), "age": .integer(36)])
        #expect(user.displayName == "Ada" && user.attributes["bio"] == .string("Counts things."))
        let reread = try await device.reloadUser()
        #expect(reread == user)
        try await device.updateProfile(displayName: .null)
        #expect(device.user?.displayName == nil)
        await #expect(throws: PosternAuthError.self) {
            try await device.updateProfile(attributes: ["big": .string(String(repeating: "x", count: 5000))])
        }
        try await device.deleteAccount()
        #expect(device.user == nil)
        await #expect(throws: PosternAuthError.notSignedIn) { _ = try await device.idToken() }
    }

    @Test("the welcome route comes from this device only; updateUserDisplayName names a new user")
    func welcome() async throws {
        let server = try await LiveServer()
        let device = server.device()
        #expect(try await device.welcome(email: "w@example.org") == .linkSent(email: "w@example.org"))
        let login = try await device.login(
            with: .emailLink(try await server.mail(to: "w@example.org")), updateUserDisplayName: "Grace")
        #expect(login.isNewUser && device.user?.displayName == "Grace")
        try await device.updatePassword("a password set on this device")
        await device.signOut()
        #expect(await device.lastEmail == "w@example.org")
        #expect(try await device.welcome(email: "W@example.org") == .linkSentOrPassword(email: "W@example.org"))
        // Another device knows nothing, whatever the server has.
        #expect(try await server.device().welcome(email: "w@example.org") == .linkSent(email: "w@example.org"))
    }

    @Test("a sign-up link opened on another device is refused; the asking device completes it and the password works")
    func signUpFromMailOnOtherDevice() async throws {
        let server = try await LiveServer()
        let asking = server.device()
        try await asking.signUp(email: "su@example.org", password: "sign up password")
        let mail = try await server.mail(to: "su@example.org")
        await #expect(throws: PosternAuthError.invalidCodeVerifier) { try await server.device().handle(pasted: mail) }
        await #expect(throws: PosternAuthError.invalidLoginCredentials) {
            try await server.device().login(with: .password(email: "su@example.org", password: "sign up password"))
        }
        let login = try await asking.handle(pasted: mail)
        #expect(login.isNewUser)
        try await server.device().login(with: .password(email: "su@example.org", password: "sign up password"))
    }

    @Test("a disabled user and a stopped server map to their errors")
    func liveErrors() async throws {
        let server = try await LiveServer()
        let device = try await SignInCaseTests.signedIn(server, "off@example.org")
        let uid = try #require(device.user?.uid)
        let (status, _) = try await server.admin("PATCH", "/v1/admin/users/\(uid)", json: #"{"disabled":true}"#)
        #expect(status == 200)
        await #expect(throws: PosternAuthError.tokenRevoked) { _ = try await device.idToken(forceRefresh: true) }
        #expect(device.user == nil)
        try await device.sendSignInLink(to: "off@example.org")
        let code = try LiveServer.sixDigits(try await server.mail(to: "off@example.org", number: 2))
        await #expect(throws: PosternAuthError.userDisabled) { try await device.login(with: .emailCode(email: "off@example.org", code: code)) }
        await #expect(throws: PosternAuthError.invalidEmail) { try await server.device().sendSignInLink(to: "not an address") }
        await #expect(throws: PosternAuthError.invalidContinueURL) {
            try await server.device().sendSignInLink(to: "a@example.org", continueURL: URL(string: "https://evil.example.net/")!)
        }
        let nowhere = PosternAuth(configuration: .init(serverURL: URL(string: "http://127.0.0.1:9")!, storage: MemorySessionStorage()))
        let error = await #expect(throws: PosternAuthError.self) { try await nowhere.signInAnonymously() }
        guard case .network? = error else { Issue.record("want .network, got \(String(describing: error))"); return }
    }
}
