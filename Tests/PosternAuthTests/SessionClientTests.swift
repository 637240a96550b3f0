import Foundation
import PosternAuth
import Testing

/// The client's view of the signed-in user's sessions, against a real `postern serve`.
@Suite("Client: sessions", .serialized)
struct SessionClientTests {
    @Test("sessions() lists this device's as current; revokeSession ends another; revokeOtherSessions keeps exactly this one")
    func sessions() async throws {
        let server = try await LiveServer()
        let email = "devices@example.org"
        let first = try await SignInCaseTests.signedIn(server, email)
        let second = try await SignInCaseTests.signedIn(server, email)
        let third = try await SignInCaseTests.signedIn(server, email)
        let listed = try await first.sessions()
        #expect(listed.count == 3 && listed.filter(\.current).count == 1)
        #expect(listed.allSatisfy { $0.method == "emailLink" && $0.network == "127.0.0.0/24" })
        let secondID = try #require(try await second.sessions().first { $0.current }?.id)
        #expect(listed.first { $0.current }?.id != secondID)

        try await first.revokeSession(id: secondID)
        await #expect(throws: PosternAuthError.tokenRevoked) { _ = try await second.idToken(forceRefresh: true) }
        await #expect(throws: PosternAuthError.sessionNotFound) { try await first.revokeSession(id: secondID) }
        #expect(try await first.sessions().count == 2)

        try await third.revokeOtherSessions()
        let left = try await third.sessions()
        #expect(left.count == 1 && left.first?.current == true)
        await #expect(throws: PosternAuthError.tokenRevoked) { _ = try await first.idToken(forceRefresh: true) }
        _ = try await third.idToken(forceRefresh: true)
        #expect(try await third.sessions().map(\.id) == left.map(\.id), "a refresh keeps the session")

        let stranger = try await SignInCaseTests.signedIn(server, "stranger@example.org")
        let thirdID = try #require(left.first?.id)
        await #expect(throws: PosternAuthError.sessionNotFound) { try await stranger.revokeSession(id: thirdID) }
        #expect(try await third.sessions().map(\.id) == [thirdID], "another user's revocation changed nothing")

        // The account's activity, a page of two at a time, newest first, following nextCursor: the
        // others ended together (one revokedOthers), the second alone, three sign-ins, the account made.
        var kinds: [String] = []
        var cursor: String?
        repeat {
            let page = try await third.activity(after: cursor, limit: 2)
            #expect(page.activity.count <= 2)
            kinds += page.activity.map(\.kind)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(kinds == ["sessionRevoked", "sessionRevoked", "signIn", "signIn", "signIn", "accountCreated"], "\(kinds)")
        await #expect(throws: PosternAuthError.self) { _ = try await third.activity(after: "not-a-cursor") }
    }
}
