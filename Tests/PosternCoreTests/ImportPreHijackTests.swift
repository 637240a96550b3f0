import Foundation
import PosternCrypto
import PosternTestSupport
import Testing

@testable import PosternCore

/// Pre-hijacking carried in through a migration: an export row with the victim's address, not
/// verified, and a password hash the attacker chose. Nobody proved that address, so the password
/// is nobody's to keep: the import drops it, and an account that already holds one (an earlier
/// import) loses it, with every session, the moment the address's owner proves the mailbox.
@Suite("Imported unverified accounts: a password nobody proved is dropped")
struct ImportPreHijackTests {
    static let attackerPassword = "the attacker's password"

    /// A `postern users export` line.
    static func line(uid: String, email: String, verified: Bool, hash: String?) -> String {
        var object: [String: Any] = [
            "uid": uid, "email": email, "emailVerified": verified, "disabled": false, "createdAt": 1_700_000_000,
            "providers": hash == nil ? ["emailLink"] : ["password"],
        ]
        if let hash { object["passwordHash"] = hash }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func importLines(_ lines: [String], into h: FlowHarness, dryRun: Bool = false) throws -> ImportSummary {
        let rows = ExportReader(source: .postern, now: 1_700_000_000).rows(Data(lines.joined(separator: "\n").utf8))
        return try AccountImporter(store: h.store).run(rows, dryRun: dryRun)
    }

    func signIn(_ h: FlowHarness, _ email: String, _ password: String) throws -> LoginDescriptor {
        try h.service.passwords.signIn(email: email, password: password, idToken: nil, allowMigration: false)
    }

    @Test("the import drops the password of an unverified account and counts it; a verified one keeps its own")
    func importDropsUnprovedPasswords() throws {
        let h = try FlowHarness()
        let attacker = try PasswordHasher.fastForTests.hash(Self.attackerPassword)
        let owner = try PasswordHasher.fastForTests.hash("the owner's password")
        let lines = [
            Self.line(uid: "victim", email: "victim@example.com", verified: false, hash: attacker),
            Self.line(uid: "owner", email: "owner@example.com", verified: true, hash: owner),
            Self.line(uid: "linkonly", email: "link@example.com", verified: false, hash: nil),
        ]
        let dry = try Self.importLines(lines, into: h, dryRun: true)
        #expect(dry.imported == 3 && dry.passwordsDropped == 1)
        let summary = try Self.importLines(lines, into: h)
        #expect(summary.imported == 3 && summary.passwordsDropped == 1 && summary.malformed.isEmpty)
        let victim = try #require(try h.account("victim"))
        #expect(victim.passwordHash == nil && !victim.providers.contains(.password) && !victim.emailVerified)
        expectAuthError("INVALID_LOGIN_CREDENTIALS") { _ = try signIn(h, "victim@example.com", Self.attackerPassword) }
        #expect(try signIn(h, "owner@example.com", "the owner's password").uid == "owner")
        // A second run skips the uids: nothing more is dropped or counted.
        let again = try Self.importLines(lines, into: h)
        #expect(again.skipped == 3 && again.passwordsDropped == 0)
    }

    @Test("a Supabase row without email_confirmed_at comes in without its bcrypt hash")
    func supabaseUnconfirmedDropsPassword() throws {
        let h = try FlowHarness()
        let hash = "$2b$04$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
        let csv = """
            id,email,encrypted_password,email_confirmed_at,created_at
            5b1f7a34-0000-4000-8000-000000000001,victim@example.com,\(hash),,2024-01-01 00:00:00+00
            5b1f7a34-0000-4000-8000-000000000002,owner@example.com,\(hash),2024-01-02 03:04:05+00,2024-01-01 00:00:00+00
            """
        let rows = ExportReader(source: .supabase, now: 1_700_000_000).rows(Data(csv.utf8))
        let summary = try AccountImporter(store: h.store).run(rows)
        #expect(summary.imported == 2 && summary.passwordsDropped == 1)
        #expect(try h.account("5b1f7a34-0000-4000-8000-000000000001")?.passwordHash == nil)
        #expect(try h.account("5b1f7a34-0000-4000-8000-000000000002")?.passwordHash == hash)
    }

    /// The ways the address's owner proves the mailbox without choosing a password.
    enum Proof: String, CaseIterable, CustomTestStringConvertible {
        case link, sixDigitCode, verifyEmail
        var testDescription: String { rawValue }
    }

    /// An account an earlier import left: the victim's address, unverified, the attacker's hash.
    func plantedAccount(_ h: FlowHarness) throws {
        let hash = try PasswordHasher.fastForTests.hash(Self.attackerPassword)
        let account = Account(
            uid: "imported-victim", email: try EmailAddress.parse("victim@example.com"), emailVerified: false, passwordHash: hash,
            createdAt: 1, providers: [.password])
        try h.store.write { tx in try tx.insertAccount(account) }
    }

    @Test("attack: the attacker signs in with the planted password; the owner proves the address; the password and every session are gone", arguments: Proof.allCases)
    func provingTheAddressEndsTheAttacker(_ proof: Proof) throws {
        let h = try FlowHarness()
        try plantedAccount(h)
        let attacker = try signIn(h, "victim@example.com", Self.attackerPassword)
        #expect(attacker.uid == "imported-victim")

        var owner: LoginDescriptor?
        switch proof {
        case .link:
            owner = try h.signIn("victim@example.com")
        case .sixDigitCode:
            try h.service.emailLink.send(EmailLinkRequest(email: "victim@example.com"))
            owner = try h.service.emailLink.complete(EmailLinkCompletion(code: try h.lastCode(), email: "victim@example.com"))
        case .verifyEmail:
            // The attacker asks for the verification himself; the owner clicks it.
            try h.service.addresses.requestVerification(idToken: attacker.session.idToken, continueURL: nil)
            _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: nil)
        }
        let account = try #require(try h.account("imported-victim"))
        #expect(account.emailVerified)
        #expect(account.passwordHash == nil && !account.providers.contains(.password))
        expectAuthError("INVALID_LOGIN_CREDENTIALS") { _ = try signIn(h, "victim@example.com", Self.attackerPassword) }
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: attacker.session.idToken) }
        #expect(throws: AuthError.self) { _ = try h.service.sessions.refresh(attacker.session.refreshToken) }
        if let owner {
            // The owner's own session was given after the others ended, and works; the answer
            // asks the app for a password, as a sign-up confirmed elsewhere does.
            #expect(owner.uid == "imported-victim" && owner.needsPassword)
            #expect(try h.service.profiles.me(idToken: owner.session.idToken).uid == "imported-victim")
            #expect(try h.service.sessions.refresh(owner.session.refreshToken).uid == "imported-victim")
        }
    }

    @Test("attack: a phone number the attacker verified on the account with the planted password is gone when the owner proves the address", arguments: [false, true])
    func trojanNumberEnds(byReset: Bool) throws {
        let h = try FlowHarness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
        }
        try plantedAccount(h)
        let attacker = try signIn(h, "victim@example.com", Self.attackerPassword)
        let number = "+4915112345678"
        let claim = try h.service.phoneOwner.add(idToken: attacker.session.idToken, phoneNumber: number, locale: nil, clientIP: nil)
        _ = try h.service.phoneOwner.prove(idToken: attacker.session.idToken, claimID: claim.claimID, code: try h.lastSMSCode())
        #expect(try h.service.phoneOperator.list(uid: "imported-victim").count == 1)

        if byReset {
            try h.service.passwords.requestReset(email: "victim@example.com", continueURL: nil, locale: nil)
            _ = try h.service.addresses.apply(link: try h.lastLink(), oobCode: nil, newPassword: "the owner's new password")
        } else {
            _ = try h.signIn("victim@example.com")
        }
        #expect(try h.service.phoneOperator.list(uid: "imported-victim").isEmpty)
        expectAuthError("INVALID_LOGIN_CREDENTIALS") { _ = try signIn(h, "victim@example.com", Self.attackerPassword) }
        // The attacker's number signs in to no account of the victim: a new one, if any.
        try h.service.phoneSignIn.send(phoneNumber: number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
        let byPhone = try h.service.phoneSignIn.complete(phoneNumber: number, code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
        #expect(byPhone.uid != "imported-victim")
    }

    @Test("a verified account's password and sessions are untouched by a sign-in by link")
    func verifiedAccountKeepsItsPassword() throws {
        let h = try FlowHarness()
        let login = try h.signUp("owner@example.com", password: "the owner's password")
        let before = try signIn(h, "owner@example.com", "the owner's password")
        let byLink = try h.signIn("owner@example.com")
        #expect(!byLink.needsPassword)
        #expect(try h.service.profiles.me(idToken: before.session.idToken).uid == login.uid)
        #expect(try signIn(h, "owner@example.com", "the owner's password").uid == login.uid)
    }
}

/// Counters an import file carries are bounded, and the flows that raise them cannot trap on
/// whatever a database holds.
@Suite("Imported counters: bounded at import, never trapping after")
struct ImportCounterBoundsTests {
    static func row(sessionVersion: Any) -> [String: Any] {
        ["uid": "u1", "email": "a@example.com", "emailVerified": true, "disabled": false, "createdAt": 1, "sessionVersion": sessionVersion]
    }

    @Test("a sessionVersion past 2^53 - 1, negative or not an integer is refused, naming the field", arguments: [
        "9223372036854775807", "9223372036854774784", "9007199254740992", "-1", "1.5", "\"7\"",
    ])
    func sessionVersionBounded(_ json: String) throws {
        let line = #"{"uid":"u1","email":"a@example.com","emailVerified":true,"disabled":false,"createdAt":1,"sessionVersion":"#
            + json + "}"
        let rows = ExportReader(source: .postern, now: 1).rows(Data(line.utf8))
        guard case .failure(let problem) = try #require(rows.first).content else {
            Issue.record("sessionVersion \(json) was accepted")
            return
        }
        #expect(problem.reason.contains("sessionVersion"))
    }

    @Test("sessionVersion 2^53 - 1 and 0 import as they are")
    func sessionVersionKept() throws {
        #expect(try PosternExport.account(Self.row(sessionVersion: 9_007_199_254_740_991), costBound: .standard).sessionVersion == 9_007_199_254_740_991)
        #expect(try PosternExport.account(Self.row(sessionVersion: 0), costBound: .standard).sessionVersion == 0)
    }

    @Test("attack: an account at sessionVersion Int64.max is disabled, enabled and changes its password: no trap, and old tokens die")
    func sessionVersionAtTheTopDoesNotTrap() throws {
        let h = try FlowHarness()
        let login = try h.signIn("owner@example.com")
        try h.store.write { tx in
            guard var account = try tx.account(uid: login.uid) else { return }
            account.sessionVersion = .max - 1
            try tx.updateAccount(account)
        }
        let session = try h.signIn("owner@example.com").session
        for _ in 0..<3 {
            _ = try h.service.operators.updateUser(uid: login.uid, disabled: true, emailVerified: nil, displayName: nil)
            _ = try h.service.operators.updateUser(uid: login.uid, disabled: false, emailVerified: nil, displayName: nil)
        }
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: session.idToken) }
        let fresh = try h.signIn("owner@example.com").session
        let changed = try h.service.passwords.setPassword(idToken: fresh.idToken, password: "a brand new password")
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.profiles.me(idToken: fresh.idToken) }
        #expect(try h.service.profiles.me(idToken: changed.idToken).uid == login.uid)
    }

    @Test("a createdAt or lastSignInAt before 1970 or past 9999 is refused, naming the field", arguments: [
        #""createdAt":-9223372036854775808"#, #""createdAt":9223372036854775807"#, #""createdAt":-1"#,
        #""createdAt":253402300800"#, #""createdAt":1,"lastSignInAt":-9223372036854775808"#,
        #""createdAt":1,"lastSignInAt":253402300800"#,
    ])
    func timesBounded(_ fields: String) throws {
        let line = #"{"uid":"u1","email":"a@example.com","emailVerified":true,"disabled":false,"# + fields + "}"
        let rows = ExportReader(source: .postern, now: 1).rows(Data(line.utf8))
        guard case .failure(let problem) = try #require(rows.first).content else {
            Issue.record("\(fields) was accepted")
            return
        }
        #expect(problem.reason.contains(fields.contains("lastSignInAt") ? "lastSignInAt" : "createdAt"), "\(problem.reason)")
        // Firebase's milliseconds likewise.
        let firebase = #"{"users":[{"localId":"u1","email":"a@example.com","createdAt":"99999999999999999"}]}"#
        guard case .failure(let late) = try #require(ExportReader(source: .firebase, now: 1).rows(Data(firebase.utf8)).first).content else {
            Issue.record("a Firebase createdAt past 9999 was accepted")
            return
        }
        #expect(late.reason.contains("createdAt"))
    }

    @Test("attack: a time a database holds at either end of Int64 is written out, not trapped on")
    func extremeTimesDoNotTrap() {
        #expect(UTCTimestamp.iso8601(253_402_300_799) == "9999-12-31T23:59:59Z")
        #expect(!UTCTimestamp.iso8601(.max).isEmpty)
        #expect(!UTCTimestamp.iso8601(.min).isEmpty)
        #expect(!UTCDateTime(seconds: .min).rfc5322Text.isEmpty)
    }
}

