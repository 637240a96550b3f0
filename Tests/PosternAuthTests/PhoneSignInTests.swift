import Foundation
import PosternAPI
import Testing
@testable import PosternAuth

/// Sign-in by phone through the client (`sendPhoneSignInCode(to:)`, `signIn(phoneNumber:code:)`)
/// against a real `postern serve --phone-sign-in`, the SMS read from its `file:` transport.
@Suite("phone sign-in against a real server")
struct PhoneSignInTests {
    static let number = "+4915112345678"

    @Test("a new number makes an account that is not anonymous; again: the same account; a wrong code is invalidPhoneCode")
    func signUpAndAgain() async throws {
        let server = try await LiveServer(LiveServer.phoneSignInFlags)
        let device = server.device()
        try await device.sendPhoneSignInCode(to: "+49 151 1234 5678")
        let login = try await device.signIn(phoneNumber: Self.number, code: try await server.smsCode(to: Self.number))
        #expect(login.isNewUser && login.email == nil)
        #expect(device.user?.uid == login.uid && device.user?.isAnonymous == false)
        #expect(device.user?.providers == ["phone"])
        await device.signOut()
        try await device.sendPhoneSignInCode(to: Self.number)
        let code = try await server.smsCode(to: Self.number, number: 2)
        let wrong = String(format: "%06d", (Int(code)! + 1) % 1_000_000)
        await #expect(throws: PosternAuthError.invalidPhoneCode) { try await device.signIn(phoneNumber: Self.number, code: wrong) }
        let again = try await device.signIn(phoneNumber: Self.number, code: code)
        #expect(again.uid == login.uid && !again.isNewUser)
        // Used once: the same code again is refused.
        await device.signOut()
        await #expect(throws: PosternAuthError.invalidPhoneCode) { try await device.signIn(phoneNumber: Self.number, code: code) }
    }

    @Test("a guest keeps its uid on a new number; on a held one: migrationRequired, then allowMigration")
    func anonymousCases() async throws {
        let server = try await LiveServer(LiveServer.phoneSignInFlags)
        let guest = server.device()
        let anonymous = try await guest.signInAnonymously()
        try await guest.sendPhoneSignInCode(to: Self.number)
        let upgraded = try await guest.signIn(phoneNumber: Self.number, code: try await server.smsCode(to: Self.number))
        #expect(upgraded.uid == anonymous.uid && upgraded.isNewUser && guest.user?.isAnonymous == false)

        let other = server.device()
        let second = try await other.signInAnonymously()
        try await other.sendPhoneSignInCode(to: Self.number)
        let code = try await server.smsCode(to: Self.number, number: 2)
        do {
            try await other.signIn(phoneNumber: Self.number, code: code)
            Issue.record("expected migrationRequired")
        } catch {
            guard case .migrationRequired = error else { Issue.record("got \(error)"); return }
        }
        let migrated = try await other.signIn(phoneNumber: Self.number, code: code, allowMigration: true)
        #expect(migrated.uid == anonymous.uid && migrated.oldUserId == second.uid && migrated.allowMigration == true)
    }

    @Test("a server without --phone-sign-in: phoneSignInDisabled for both calls")
    func disabled() async throws {
        let server = try await LiveServer()
        let device = server.device()
        await #expect(throws: PosternAuthError.phoneSignInDisabled) { try await device.sendPhoneSignInCode(to: Self.number) }
        await #expect(throws: PosternAuthError.phoneSignInDisabled) { try await device.signIn(phoneNumber: Self.number, code: "123456") }
    }
}
