import Foundation
import PosternAPI
import PosternCore
import PosternCrypto
@testable import PosternServer
import PosternTestSupport
import Testing

/// `/v1/me/sessions` and `/v1/me/activity` through the router, from devices that differ by
/// User-Agent and address, and the admin's views of them.
@Suite("Sessions and activity routes")
struct SessionRoutesTests {
    static let token = "sessions-admin-test-token-0123456789abcdef"

    /// A device: its User-Agent and address.
    struct Device {
        let userAgent: String
        let ip: String
        static let laptop = Device(userAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", ip: "198.51.100.7")
        static let phone = Device(
            userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
            ip: "2001:db8:7:1::5")
    }

    static func call(
        _ h: RouterTests.Harness, _ method: String, _ path: String, query: [String: String] = [:], body: String? = nil, bearer: String? = nil,
        from device: Device = .laptop
    ) -> HTTPResponse {
        let plain = RouterTests.request(method, path, query: query, body: body, bearer: bearer, ip: device.ip)
        return h.router.handle(
            HTTPRequest(
                method: plain.method, path: plain.path, query: plain.query, headers: plain.headers.merging(["user-agent": device.userAgent]) { $1 },
                body: plain.body, clientIP: plain.clientIP))
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
        try JSONDecoder().decode(type, from: Data(response.body))
    }

    /// The link of the newest mail to `email`.
    static func lastLink(_ h: RouterTests.Harness, to email: String) throws -> String {
        let queued = try #require(h.store.queuedMail().last { $0.recipient.address == email })
        let composed = try #require(try h.service.mailComposer.compose(queued.intent, recipient: queued.recipient))
        guard case .confirmSignUp(let link, _) = composed.message.content else { throw SignUpMailMissing() }
        return link
    }

    struct SignUpMailMissing: Error {}

    /// Signs `email` up with a password on `device` and confirms it there: the session.
    static func signUp(_ h: RouterTests.Harness, _ email: String, password: String, on device: Device) throws -> SessionBody {
        let verifier = "walk-verifier-" + Base64URL.encode(try SecureRandom.bytes(24))
        let challenge = Base64URL.encode(SHA256.hash(verifier))
        let asked = call(h, "POST", "/v1/password/sign-up",
                         body: #"{"email":"\#(email)","password":"\#(password)","codeChallenge":"\#(challenge)"}"#, from: device)
        #expect(asked.status == 202)
        let link = try lastLink(h, to: email)
        let completed = call(h, "POST", "/v1/email-link/complete", body: #"{"link":"\#(link)","codeVerifier":"\#(verifier)"}"#, from: device)
        #expect(completed.status == 200, "\(String(decoding: completed.body, as: UTF8.self))")
        return try decode(LoginBody.self, completed).session
    }

    static func signIn(_ h: RouterTests.Harness, _ email: String, password: String, on device: Device) throws -> SessionBody {
        let response = call(h, "POST", "/v1/password/sign-in", body: #"{"email":"\#(email)","password":"\#(password)"}"#, from: device)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try decode(LoginBody.self, response).session
    }

    static func sessions(_ h: RouterTests.Harness, _ session: SessionBody, from device: Device = .laptop) throws -> [DeviceSessionBody] {
        let response = call(h, "GET", "/v1/me/sessions", bearer: session.idToken, from: device)
        #expect(response.status == 200)
        return try decode(DeviceSessionListBody.self, response).sessions
    }

    static func refresh(_ h: RouterTests.Harness, _ session: SessionBody, from device: Device) -> HTTPResponse {
        call(h, "POST", "/v1/token", body: #"{"refreshToken":"\#(session.refreshToken)"}"#, from: device)
    }

    @Test("the walk: sign up, sign in on two devices, change the password, revoke the other device; the activity says so, newest first")
    func walk() throws {
        let h = try RouterTests.harnessWithService()
        let email = "walker@example.com"
        let laptop = try Self.signUp(h, email, password: "first fine password 1", on: .laptop)
        let phone = try Self.signIn(h, email, password: "first fine password 1", on: .phone)
        let both = try Self.sessions(h, laptop)
        #expect(both.count == 2)
        let mine = try #require(both.first { $0.current })
        #expect(mine.deviceName == "Firefox on Linux" && mine.network == "198.51.100.0/24")
        let theirs = try #require(both.first { !$0.current })
        #expect(theirs.deviceName == "Safari on iPhone" && theirs.network == "2001:db8:7::/48" && theirs.method == "password")
        #expect(try Self.sessions(h, phone).first { $0.current }?.id == theirs.id, "each device sees its own as current")

        // Changing the password ends every session but gives the laptop a new one.
        let changed = Self.call(h, "POST", "/v1/me/password", body: #"{"password":"second fine password 2"}"#, bearer: laptop.idToken)
        #expect(changed.status == 200)
        let laptopAgain = try Self.decode(SessionBody.self, changed)
        #expect(Self.refresh(h, phone, from: .phone).status == 401, "the phone's session ended with the password")
        let phoneAgain = try Self.signIn(h, email, password: "second fine password 2", on: .phone)
        let now = try Self.sessions(h, laptopAgain)
        #expect(now.count == 2 && now.filter(\.current).count == 1)
        let other = try #require(now.first { !$0.current })
        #expect(other.deviceName == "Safari on iPhone")

        // The laptop revokes the phone.
        #expect(Self.call(h, "DELETE", "/v1/me/sessions/\(other.id)", bearer: laptopAgain.idToken).status == 204)
        let refused = Self.refresh(h, phoneAgain, from: .phone)
        #expect(refused.status == 401 && RouterTests.errorCode(refused) == "TOKEN_REVOKED", "a revoked session's refresh token is refused")
        let left = try Self.sessions(h, laptopAgain)
        #expect(left.map(\.current) == [true] && left.first?.deviceName == "Firefox on Linux")
        #expect(Self.refresh(h, laptopAgain, from: .laptop).status == 200, "the laptop's own session goes on")

        let activity = Self.call(h, "GET", "/v1/me/activity", bearer: laptopAgain.idToken)
        #expect(activity.status == 200)
        let entries = try Self.decode(ActivityListBody.self, activity)
        #expect(entries.nextCursor == nil)
        let lines = entries.activity.map { [$0.kind, $0.method ?? "-", $0.deviceName ?? "-", $0.network ?? "-"].joined(separator: " | ") }
        #expect(lines == [
            "sessionRevoked | revoked | - | -",
            "signIn | password | Safari on iPhone | 2001:db8:7::/48",
            "sessionRevoked | passwordChanged | - | -",
            "passwordChanged | - | - | -",
            "signIn | password | Safari on iPhone | 2001:db8:7::/48",
            "signIn | password | Firefox on Linux | 198.51.100.0/24",
            "accountCreated | - | - | -",
        ], "\(lines)")
        let text = String(decoding: activity.body, as: UTF8.self)
        #expect(!text.contains("198.51.100.7") && !text.contains("2001:db8:7:1::5") && !text.contains(email), "no full address, no email")
    }

    @Test("another user's session id is 404 and revokes nothing; an unknown one likewise")
    func anotherUsersSession() throws {
        let h = try RouterTests.harnessWithService()
        let victim = try Self.signUp(h, "victim@example.com", password: "victim fine password 1", on: .phone)
        let attacker = try Self.signUp(h, "attacker@example.com", password: "attacker fine password 1", on: .laptop)
        let target = try #require(try Self.sessions(h, victim, from: .phone).first)
        for id in [target.id, "nonexistent-session-id"] {
            let response = Self.call(h, "DELETE", "/v1/me/sessions/\(id)", bearer: attacker.idToken)
            #expect(response.status == 404 && RouterTests.errorCode(response) == "SESSION_NOT_FOUND")
        }
        #expect(try Self.sessions(h, victim, from: .phone).map(\.id) == [target.id], "the victim's session stays")
        #expect(Self.refresh(h, victim, from: .phone).status == 200, "and refreshes")
        #expect(Self.call(h, "DELETE", "/v1/me/sessions/\(target.id)").status == 401, "no token, no answer about it")
    }

    @Test("revoke-others keeps exactly the caller's session, of three")
    func revokeOthers() throws {
        let h = try RouterTests.harnessWithService()
        let email = "many@example.com"
        let first = try Self.signUp(h, email, password: "many fine password 1", on: .laptop)
        let second = try Self.signIn(h, email, password: "many fine password 1", on: .phone)
        let third = try Self.signIn(h, email, password: "many fine password 1", on: .laptop)
        let caller = try #require(try Self.sessions(h, second, from: .phone).first { $0.current })
        #expect(Self.call(h, "POST", "/v1/me/sessions/revoke-others", body: "{}", bearer: second.idToken, from: .phone).status == 204)
        #expect(try Self.sessions(h, second, from: .phone).map(\.id) == [caller.id])
        #expect(Self.refresh(h, first, from: .laptop).status == 401 && Self.refresh(h, third, from: .laptop).status == 401)
        #expect(Self.refresh(h, second, from: .phone).status == 200)
    }

    @Test("a refresh keeps the session's id (sid) and moves its last use; the list is the same after")
    func refreshKeepsTheSession() throws {
        let h = try RouterTests.harnessWithService()
        let session = try Self.signUp(h, "refresher@example.com", password: "refresh fine password 1", on: .laptop)
        let before = try #require(try Self.sessions(h, session).first)
        let refreshed = try Self.decode(SessionBody.self, Self.refresh(h, session, from: .phone))
        let after = try Self.sessions(h, refreshed)
        #expect(after.map(\.id) == [before.id] && after.first?.current == true)
        #expect(after.first?.deviceName == "Firefox on Linux", "the device it signed in on, not the one that refreshed")
    }

    @Test("the admin lists a user's sessions and activity, revokes one (404 for another user's), and 404s an unknown user")
    func admin() throws {
        let h = try RouterTests.harnessWithService(adminToken: Self.token)
        let session = try Self.signUp(h, "watched@example.com", password: "watched fine password 1", on: .laptop)
        let other = try Self.signUp(h, "other@example.com", password: "other fine password 1", on: .phone)
        let uid = session.uid
        let listed = Self.call(h, "GET", "/v1/admin/users/\(uid)/sessions", bearer: Self.token)
        #expect(listed.status == 200)
        let sessions = try Self.decode(DeviceSessionListBody.self, listed).sessions
        #expect(sessions.count == 1 && sessions.first?.current == false, "no session of the admin's is current")
        let otherID = try #require(try Self.sessions(h, other, from: .phone).first?.id)
        #expect(Self.call(h, "DELETE", "/v1/admin/users/\(uid)/sessions/\(otherID)", bearer: Self.token).status == 404)
        #expect(Self.refresh(h, other, from: .phone).status == 200, "the other user's session stays")
        let id = try #require(sessions.first?.id)
        #expect(Self.call(h, "DELETE", "/v1/admin/users/\(uid)/sessions/\(id)", bearer: Self.token).status == 204)
        #expect(Self.refresh(h, session, from: .laptop).status == 401)
        let activity = try Self.decode(ActivityListBody.self, Self.call(h, "GET", "/v1/admin/users/\(uid)/activity", bearer: Self.token))
        #expect(activity.activity.first?.kind == "sessionRevoked" && activity.activity.last?.kind == "accountCreated")
        #expect(Self.call(h, "GET", "/v1/admin/users/nobody/sessions", bearer: Self.token).status == 404)
        #expect(Self.call(h, "GET", "/v1/admin/users/nobody/activity", bearer: Self.token).status == 404)
        #expect(Self.call(h, "GET", "/v1/admin/users/\(uid)/sessions", bearer: session.idToken).status == 401, "a user's token is no admin's")
    }

    @Test("the activity pages by cursor, newest first, nothing twice; a forged cursor or a limit out of range is 400")
    func activityPages() throws {
        let h = try RouterTests.harnessWithService()
        let email = "pager@example.com"
        var session = try Self.signUp(h, email, password: "pager fine password 1", on: .laptop)
        for _ in 0..<4 { session = try Self.signIn(h, email, password: "pager fine password 1", on: .phone) }
        let all = try Self.decode(ActivityListBody.self, Self.call(h, "GET", "/v1/me/activity", bearer: session.idToken)).activity
        #expect(all.count == 6, "created, 5 sign-ins, and nothing else: \(all.map(\.kind))")
        var seen: [ActivityEntryBody] = []
        var cursor: String?
        repeat {
            var query = ["limit": "3"]
            if let cursor { query["cursor"] = cursor }
            let page = try Self.decode(ActivityListBody.self, Self.call(h, "GET", "/v1/me/activity", query: query, bearer: session.idToken))
            seen += page.activity
            cursor = page.nextCursor
        } while cursor != nil && seen.count < 20
        #expect(seen == all)
        for query in [["cursor": "not-a-cursor!"], ["limit": "0"], ["limit": "101"]] {
            let response = Self.call(h, "GET", "/v1/me/activity", query: query, bearer: session.idToken)
            #expect(response.status == 400 && RouterTests.errorCode(response) == "INVALID_ARGUMENT", "\(query)")
        }
    }
}
