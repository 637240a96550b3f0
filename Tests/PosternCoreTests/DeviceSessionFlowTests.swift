import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The sessions a user sees and the account's activity, through the flows: what a sign-in
/// records from the request's ``SessionOrigin``, what a refresh moves, what revocation ends.
@Suite("Device sessions and activity")
struct DeviceSessionFlowTests {
    static let laptop = SessionOrigin(deviceName: "Firefox on Linux", clientIP: "198.51.100.7")
    static let phone = SessionOrigin(deviceName: "Safari on iPhone", clientIP: "2001:db8:7:1::5")

    /// `body` as a request from `origin` runs it.
    static func from<T>(_ origin: SessionOrigin, _ body: () throws -> T) rethrows -> T {
        try SessionOrigin.$current.withValue(origin, operation: body)
    }

    /// The `sid` claim of an ID token.
    static func sid(_ idToken: String) throws -> String? {
        let claims = try JSONWebToken.parse(idToken).claims
        return (try JSONSerialization.jsonObject(with: claims) as? [String: Any])?["sid"] as? String
    }

    @Test("an origin keeps only the /24 or /48 of the address; an unparsable address keeps none")
    func coarseNetwork() {
        #expect(Self.laptop.network == "198.51.100.0/24")
        #expect(Self.phone.network == "2001:db8:7::/48")
        #expect(SessionOrigin(deviceName: nil, clientIP: "::ffff:192.0.2.33").network == "192.0.2.0/24")
        #expect(SessionOrigin(deviceName: nil, clientIP: "2001:db8:7:1::/64").network == "2001:db8:7::/48", "the router's key of an IPv6 client")
        #expect(SessionOrigin(deviceName: nil, clientIP: "unix-socket").network == nil)
    }

    @Test("a sign-in records its session with the request's device and network, and its ID token's sid names it")
    func signInRecordsTheSession() throws {
        let h = try FlowHarness()
        let login = try Self.from(Self.laptop) { try h.signIn("ann@example.com") }
        let listed = try h.service.sessions.deviceSessions(idToken: login.session.idToken)
        let session = try #require(listed.sessions.first)
        #expect(listed.sessions.count == 1 && listed.current == session.id)
        #expect(try Self.sid(login.session.idToken) == session.id)
        #expect(session.deviceName == "Firefox on Linux" && session.network == "198.51.100.0/24" && session.method == "emailLink")
        #expect(session.clientID == nil && session.uid == login.uid && session.createdAt == session.lastUsedAt)
        let record = try #require(try h.store.read { try $0.refreshToken(hash: SHA256.hash(login.session.refreshToken)) })
        #expect(session.family == record.family && session.expiresAt == record.expiresAt)
        #expect(session.id != session.family, "the public id is not the family")
    }

    @Test("a sign-in with no request (the CLI's, a test's) records its session without device or network")
    func noOrigin() throws {
        let h = try FlowHarness()
        let login = try h.signIn("bob@example.com")
        let session = try #require(try h.service.sessions.deviceSessions(idToken: login.session.idToken).sessions.first)
        #expect(session.deviceName == nil && session.network == nil)
    }

    @Test("a refresh moves the session's last use and expiry and keeps its id; a family from before sessions were kept gets its row then")
    func refreshMovesTheSession() throws {
        let h = try FlowHarness()
        let login = try Self.from(Self.laptop) { try h.signIn("cy@example.com") }
        let before = try #require(try h.service.sessions.deviceSessions(idToken: login.session.idToken).sessions.first)
        h.clock.advance(by: 600)
        let refreshed = try Self.from(Self.phone) { try h.service.sessions.refresh(login.session.refreshToken) }
        let after = try #require(try h.service.sessions.deviceSessions(idToken: refreshed.idToken).sessions.first)
        #expect(try after.id == before.id && Self.sid(refreshed.idToken) == before.id)
        #expect(after.lastUsedAt == before.lastUsedAt + 600 && after.expiresAt == before.expiresAt + 600)
        #expect(after.deviceName == "Firefox on Linux", "where it signed in")

        // A refresh token of a family with no session row, as one issued before the migration.
        let old = "an-old-refresh-token-from-before-sessions"
        let now = h.clock.unixSeconds()
        try h.store.write { tx in
            try tx.insertRefreshToken(
                RefreshTokenRecord(
                    hash: SHA256.hash(old), family: "old-family", uid: login.uid, authTime: now, method: "password", createdAt: now,
                    expiresAt: now + 3600))
        }
        let adopted = try Self.from(Self.phone) { try h.service.sessions.refresh(old) }
        let sessions = try h.service.sessions.deviceSessions(idToken: adopted.idToken)
        #expect(sessions.sessions.count == 2)
        let row = try #require(sessions.sessions.first { $0.family == "old-family" })
        #expect(sessions.current == row.id && row.deviceName == "Safari on iPhone" && row.method == "password")
    }

    @Test("revoking a session ends its refresh token and drops it from the list; another account's id revokes nothing")
    func revoke() throws {
        let h = try FlowHarness()
        let mine = try Self.from(Self.laptop) { try h.signIn("dee@example.com") }
        let other = try Self.from(Self.phone) { try h.signIn("dee@example.com") }
        let stranger = try h.signIn("eve@example.com")
        let otherID = try #require(try Self.sid(other.session.idToken))
        expectAuthError("SESSION_NOT_FOUND") { try h.service.sessions.revokeSession(idToken: stranger.session.idToken, id: otherID) }
        #expect(try h.service.sessions.deviceSessions(idToken: mine.session.idToken).sessions.count == 2)
        try h.service.sessions.revokeSession(idToken: mine.session.idToken, id: otherID)
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(other.session.refreshToken) }
        let left = try h.service.sessions.deviceSessions(idToken: mine.session.idToken)
        #expect(left.sessions.map(\.id) == [left.current])
        expectAuthError("SESSION_NOT_FOUND") { try h.service.sessions.revokeSession(idToken: mine.session.idToken, id: otherID) }
    }

    @Test("revoke-others keeps exactly the caller's session and ends the rest")
    func revokeOthers() throws {
        let h = try FlowHarness()
        let logins = try (0..<3).map { _ in try Self.from(Self.phone) { try h.signIn("fay@example.com") } }
        #expect(try h.service.sessions.revokeOtherSessions(idToken: logins[1].session.idToken) == 2)
        let left = try h.service.sessions.deviceSessions(idToken: logins[1].session.idToken)
        #expect(try left.sessions.map(\.id) == [Self.sid(logins[1].session.idToken)])
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(logins[0].session.refreshToken) }
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(logins[2].session.refreshToken) }
        _ = try h.service.sessions.refresh(logins[1].session.refreshToken)
        #expect(try h.service.sessions.revokeOtherSessions(idToken: logins[1].session.idToken) == 0, "none left to revoke")
    }

    @Test("the activity records account events with the sign-in's device and network, and nothing for a profile change")
    func activity() throws {
        let h = try FlowHarness()
        let login = try Self.from(Self.phone) { try h.signIn("gus@example.com") }
        _ = try h.service.profiles.update(idToken: login.session.idToken, displayName: .some("Gus"), attributes: nil)
        try h.service.sessions.signOut(refreshToken: login.session.refreshToken)
        let page = try h.service.sessions.activity(idToken: login.session.idToken, after: nil, limit: 10)
        #expect(page.entries.map(\.kind) == ["sessionRevoked", "signIn", "accountCreated"])
        let signIn = try #require(page.entries.dropFirst().first)
        #expect(signIn.method == "emailLink" && signIn.deviceName == "Safari on iPhone" && signIn.network == "2001:db8:7::/48")
        #expect(page.entries.first?.method == "signOut" && page.entries.first?.deviceName == nil)
        #expect(page.next == nil)
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.sessions.activity(idToken: login.session.idToken, after: nil, limit: 0) }
    }

    @Test("an OpenID Connect client's grant with offline_access is a session of the user's, marked by its client, moved by its refresh, ended by its revocation")
    func oidcGrant() throws {
        let o = try OIDCHarness()
        let (redirect, _) = try Self.from(Self.laptop) { try o.signInByLink("ida@example.com") }
        let body = try o.exchange(try #require(OIDCHarness.query(redirect, "code")))
        guard case .string(let refresh)? = body["refresh_token"] else { throw FlowHarness.HarnessError.noMail }
        let api = try Self.from(Self.phone) { try o.h.signIn("ida@example.com") }
        let listed = try o.h.service.sessions.deviceSessions(idToken: api.session.idToken).sessions
        let grant = try #require(listed.first { $0.clientID == "grafana" })
        #expect(listed.count == 2 && grant.deviceName == nil && grant.network == nil, "a grant's token request comes from the client's server")
        o.h.clock.advance(by: 120)
        let form: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        guard case .object(let next) = try o.flow.token(form, authorization: nil), case .string(let successor)? = next["refresh_token"] else {
            throw FlowHarness.HarnessError.noMail
        }
        let moved = try #require(try o.h.store.read { try $0.deviceSession(id: grant.id) })
        #expect(moved.lastUsedAt == grant.lastUsedAt + 120)
        try o.h.service.sessions.revokeSession(idToken: api.session.idToken, id: grant.id)
        let revoked: [(name: String, value: String)] = [
            ("grant_type", "refresh_token"), ("refresh_token", successor), ("client_id", "grafana"), ("client_secret", o.confidentialSecret),
        ]
        #expect(oauthError { _ = try o.flow.token(revoked, authorization: nil) } == "invalid_grant", "the user ended the client's grant")
        #expect(try o.h.service.sessions.deviceSessions(idToken: api.session.idToken).sessions.map(\.clientID) == [nil])
    }

    @Test("--notify-new-device: a sign-in on a new device and network mails the account once; not its first sign-in, not a known device, not an anonymous account")
    func newDeviceNotice() throws {
        let h = try FlowHarness { $0.newDeviceWindow = 90 * 86_400 }
        func notices() -> [MailIntent] {
            h.store.queuedMail().map(\.intent).filter { if case .newSignIn = $0 { true } else { false } }
        }
        let login = try Self.from(Self.laptop) { try h.signIn("jo@example.com") }
        #expect(notices().isEmpty, "the account's first sign-in")
        _ = try Self.from(Self.laptop) { try h.signIn("jo@example.com") }
        #expect(notices().isEmpty, "a known device")
        _ = try Self.from(Self.phone) { try h.signIn("jo@example.com") }
        #expect(notices() == [.newSignIn(device: "Safari on iPhone (2001:db8:7::/48)")])
        _ = try Self.from(Self.phone) { try h.signIn("jo@example.com") }
        #expect(notices().count == 1, "sent once: the phone is known now")
        // The same device name from another network is new.
        _ = try Self.from(SessionOrigin(deviceName: "Firefox on Linux", clientIP: "203.0.113.9")) { try h.signIn("jo@example.com") }
        #expect(notices().count == 2)
        let queued = try #require(h.store.queuedMail().last)
        #expect(queued.recipient.address == "jo@example.com")
        let mail = try #require(try h.service.mailComposer.compose(queued.intent, recipient: queued.recipient))
        #expect(mail.message.content == .newSignIn(device: "Firefox on Linux (203.0.113.0/24)"))
        // Past the window, a device is new again.
        h.clock.advance(by: 91 * 86_400)
        _ = try Self.from(Self.laptop) { try h.signIn("jo@example.com") }
        #expect(notices().count == 2, "no sign-in within the window to compare with: as a first one")
        _ = try Self.from(Self.phone) { try h.signIn("jo@example.com") }
        #expect(notices().count == 3)
        // An anonymous account's sign-ins mail nobody.
        _ = try Self.from(Self.laptop) { try h.service.sessions.signInAnonymously() }
        _ = try Self.from(Self.phone) { try h.service.sessions.signInAnonymously() }
        #expect(notices().count == 3)
        #expect(login.uid == (try h.store.read { try $0.account(address: try EmailAddress.parse("jo@example.com")) })?.uid)
    }

    @Test("without --notify-new-device no notice is queued")
    func newDeviceNoticeOff() throws {
        let h = try FlowHarness()
        _ = try Self.from(Self.laptop) { try h.signIn("kim@example.com") }
        _ = try Self.from(Self.phone) { try h.signIn("kim@example.com") }
        #expect(!h.store.queuedMail().contains { if case .newSignIn = $0.intent { true } else { false } })
    }

    @Test("housekeeping deletes activity older than --activity-days and sessions past their expiry")
    func housekeeping() throws {
        let h = try FlowHarness()
        let login = try Self.from(Self.laptop) { try h.signIn("hal@example.com") }
        var policy = RetentionPolicy()
        policy.activityRetention = 86_400
        let housekeeper = Housekeeper(store: h.store, policy: policy, clock: h.clock)
        h.clock.advance(by: 86_399)
        #expect(try housekeeper.runRound().removed[.accountActivity] == 0)
        h.clock.advance(by: 1)
        #expect(try housekeeper.runRound().removed[.accountActivity] == 2, "the sign-in and the account's creation")
        #expect(try h.store.read { try $0.deviceSessions(uid: login.uid, now: 0) }.count == 1, "the session lives on")
        h.clock.advance(by: 400 * 86_400)
        #expect(try housekeeper.runRound().removed[.sessions] == 1)
    }
}
