import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// Phone numbers by consent of both parties, over the in-memory store (issue 17 point 3).
@Suite("Phone claims: both parties, one holder per number, the transfer")
struct FlowPhoneTests {
    static let number = "+49 151 1234 5678"

    static func harness(_ configure: (inout AuthConfiguration) -> Void = { _ in }) throws -> FlowHarness {
        try FlowHarness {
            $0.phoneTransferSeconds = 3_600
            $0.webhooks = WebhookConfiguration(endpoints: ["https://hooks.example.com/a"])
            configure(&$0)
        }
    }

    /// Adds `number` to `idToken`'s account; returns the claim id and the SMS's code.
    static func add(_ h: FlowHarness, _ idToken: String, _ number: String = number) throws -> (id: String, code: String) {
        let claim = try h.service.phoneOwner.add(idToken: idToken, phoneNumber: number, locale: nil, clientIP: "192.0.2.1")
        return (claim.claimID, try h.lastSMSCode())
    }

    static func phones(_ h: FlowHarness, _ idToken: String) throws -> [PhoneClaimView] {
        try h.service.phoneOwner.list(idToken: idToken)
    }

    /// V holds `number` verified; U asked for it and proved it: a transfer waits for V's release
    /// or the cool-off (3,600 s here).
    static func transferWaiting(_ h: FlowHarness) throws -> (v: LoginDescriptor, held: String, u: LoginDescriptor, asked: String) {
        let v = try h.signIn("v@example.com")
        let held = try Self.add(h, v.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: v.session.idToken, claimID: held.id, code: held.code)
        let u = try h.signIn("u@example.com")
        let asked = try Self.add(h, u.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: asked.id, code: asked.code)
        return (v, held.id, u, asked.id)
    }

    /// A session of `uid` that signed in with its number (method "phone"); its refresh token's hash.
    static func phoneSession(_ h: FlowHarness, uid: String) throws -> [UInt8] {
        let hash = SHA256.hash(Array("a phone session of \(uid)".utf8))
        try h.store.write { tx in
            try tx.insertRefreshToken(RefreshTokenRecord(
                hash: hash, family: "phone-family-\(uid)", uid: uid, authTime: h.clock.unixSeconds(), method: "phone",
                createdAt: h.clock.unixSeconds(), expiresAt: h.clock.unixSeconds() + 86_400))
        }
        return hash
    }

    static func events(_ h: FlowHarness) -> [String] { h.store.snapshot().webhooks.map(\.eventType).filter { $0.hasPrefix("phone.") } }

    @Test("owner first, the holder typing the code into the owner's session: verified, phone.verified")
    func ownerFirstOnePerson() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let (id, code) = try Self.add(h, u.session.idToken)
        let sms = try #require(try h.lastSMS())
        #expect(sms.kind == .claimCode)
        #expect(sms.link == "https://auth.example.com/phone?claim=\(id)")
        #expect(try Self.phones(h, u.session.idToken).map(\.status) == [.awaitingCode])
        _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: id, code: code)
        let claims = try Self.phones(h, u.session.idToken)
        #expect(claims.map(\.status) == [.verified])
        #expect(claims[0].phoneNumber == "+49…")
        #expect(Self.events(h) == ["phone.verified"])
        // A proved claim sends nothing more.
        #expect(try h.lastSMS() == nil)
    }

    @Test("owner first, the holder proving on its own (the hosted page): verified")
    func ownerFirstHolderElsewhere() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let (id, code) = try Self.add(h, u.session.idToken)
        _ = try h.service.phoneHolder.prove(claimID: id, code: code)
        #expect(try Self.phones(h, u.session.idToken).map(\.status) == [.verified])
        #expect(try h.service.phoneHolder.read(claimID: id, code: code).status == .verified)
    }

    @Test("holder first (the seed's order): proved, unapproved, then the owner approves: verified")
    func holderFirst() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let holderSession = try h.signIn("holder@example.com").session
        let started = try h.service.phoneHolder.start(
            idToken: holderSession.idToken, phoneNumber: Self.number, email: "u@example.com", locale: "de", clientIP: nil)
        let code = try h.lastSMSCode()
        _ = try h.service.phoneHolder.prove(claimID: started.claimID, code: code)
        var claims = try Self.phones(h, u.session.idToken)
        #expect(claims.map(\.status) == [.awaitingApproval])
        #expect(claims[0].holderProved && !claims[0].ownerApproved)
        // Past the code's 10 minutes the approval stays open (a day).
        h.clock.advance(by: 3_000)
        let fresh = try h.signIn("u@example.com")
        _ = try h.service.phoneOwner.approve(idToken: fresh.session.idToken, claimID: started.claimID)
        claims = try Self.phones(h, fresh.session.idToken)
        #expect(claims.map(\.status) == [.verified])
        // Approving twice is a state error, not a second verification.
        expectAuthError("PHONE_CLAIM_STATE") { _ = try h.service.phoneOwner.approve(idToken: fresh.session.idToken, claimID: started.claimID) }
    }

    @Test("attacker: a number planted for the victim's account (holder first) shows its last two digits in the victim's list, so it cannot pass for the victim's own")
    func plantedClaimShowsItsEnding() throws {
        let h = try Self.harness()
        let victim = try h.signIn("u@example.com")
        let own = try Self.add(h, victim.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: victim.session.idToken, claimID: own.id, code: own.code)
        // The attacker proves a number of its own and asks for it to join the victim's account.
        let attacker = try h.signIn("attacker@example.com").session
        let planted = try h.service.phoneHolder.start(
            idToken: attacker.idToken, phoneNumber: "+49 151 9876 5432", email: "u@example.com", locale: nil, clientIP: nil)
        let code = try h.lastSMSCode()
        _ = try h.service.phoneHolder.prove(claimID: planted.claimID, code: code)
        let claims = try Self.phones(h, victim.session.idToken)
        let shown = try #require(claims.first { $0.claimID == planted.claimID })
        #expect(shown.status == .awaitingApproval && shown.phoneNumber == "+49…32", "\(shown.phoneNumber)")
        // The victim's own, settled number shows no digits; nothing else of the planted one shows.
        #expect(claims.first { $0.claimID == own.id }?.phoneNumber == "+49…")
        #expect(!claims.contains { $0.phoneNumber.contains("9876") })
        // The attacker's own view of the claim (the holder's read) shows no more than before.
        #expect(try h.service.phoneHolder.read(claimID: planted.claimID, code: code).phoneNumber == "+49…")
    }

    @Test("holder first for an address without an account: the same answer, and nothing can approve it")
    func holderFirstNoAccount() throws {
        let h = try Self.harness()
        _ = try h.signIn("u@example.com")
        let holderSession = try h.signIn("holder@example.com").session
        let known = try h.service.phoneHolder.start(
            idToken: holderSession.idToken, phoneNumber: Self.number, email: "u@example.com", locale: nil, clientIP: nil)
        let unknown = try h.service.phoneHolder.start(
            idToken: holderSession.idToken, phoneNumber: "+4915199999999", email: "nobody@example.com", locale: nil, clientIP: nil)
        #expect(known.status == unknown.status && known.ownerApproved == unknown.ownerApproved)
        #expect(known.holderProved == unknown.holderProved && known.expiresAt == unknown.expiresAt)
        #expect(known.phoneNumber == unknown.phoneNumber)
    }

    @Test("an approval needs a recent sign-in; a claim of another account is not found")
    func approvalNeedsRecentSignIn() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let other = try h.signIn("o@example.com")
        let holderSession = try h.signIn("holder@example.com").session
        let started = try h.service.phoneHolder.start(
            idToken: holderSession.idToken, phoneNumber: Self.number, email: "u@example.com", locale: nil, clientIP: nil)
        _ = try h.service.phoneHolder.prove(claimID: started.claimID, code: try h.lastSMSCode())
        expectAuthError("PHONE_CLAIM_NOT_FOUND") { _ = try h.service.phoneOwner.approve(idToken: other.session.idToken, claimID: started.claimID) }
        h.clock.advance(by: 600)
        expectAuthError("REQUIRES_RECENT_LOGIN") { _ = try h.service.phoneOwner.approve(idToken: u.session.idToken, claimID: started.claimID) }
        expectAuthError("REQUIRES_RECENT_LOGIN") { _ = try h.service.phoneOwner.add(idToken: u.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil) }
    }

    @Test("attacker: an old session of U's, typing the code of a claim the thief started for the thief's number, proves it but approves nothing")
    func staleSessionApprovesNothing() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        h.clock.advance(by: 600)
        let thief = try h.signIn("thief@example.com").session
        let started = try h.service.phoneHolder.start(
            idToken: thief.idToken, phoneNumber: Self.number, email: "u@example.com", locale: nil, clientIP: nil)
        _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: started.claimID, code: try h.lastSMSCode())
        var claims = try Self.phones(h, u.session.idToken)
        #expect(claims.map(\.status) == [.awaitingApproval])
        #expect(claims[0].holderProved && !claims[0].ownerApproved)
        expectAuthError("REQUIRES_RECENT_LOGIN") { _ = try h.service.phoneOwner.approve(idToken: u.session.idToken, claimID: started.claimID) }
        // The owner, signed in again, decides.
        let fresh = try h.signIn("u@example.com", idToken: u.session.idToken)
        _ = try h.service.phoneOwner.approve(idToken: fresh.session.idToken, claimID: started.claimID)
        claims = try Self.phones(h, fresh.session.idToken)
        #expect(claims.map(\.status) == [.verified])
    }

    @Test("a number held by V: the same answers as a free one; V's owner is mailed; it moves on release")
    func transferByRelease() throws {
        let h = try Self.harness()
        let v = try h.signIn("v@example.com")
        let held = try Self.add(h, v.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: v.session.idToken, claimID: held.id, code: held.code)
        let u = try h.signIn("u@example.com")
        let free = try h.signIn("f@example.com")
        // The same answers for a held and a free number, at the request and at the proof.
        let askHeld = try h.service.phoneOwner.add(idToken: u.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        let heldCode = try h.lastSMSCode()
        let askFree = try h.service.phoneOwner.add(idToken: free.session.idToken, phoneNumber: "+4915100000001", locale: nil, clientIP: nil)
        let freeCode = try h.lastSMSCode()
        #expect(askHeld.status == askFree.status && askHeld.expiresAt == askFree.expiresAt && askHeld.ownerApproved == askFree.ownerApproved)
        let mailsBefore = h.store.queuedMail().count
        let proofHeld = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: askHeld.claimID, code: heldCode)
        let proofFree = try h.service.phoneOwner.prove(idToken: free.session.idToken, claimID: askFree.claimID, code: freeCode)
        #expect(proofHeld.claimID == askHeld.claimID && proofFree.claimID == askFree.claimID)
        // V's owner is told, in the proof's transaction.
        let mails = h.store.queuedMail().dropFirst(mailsBefore)
        #expect(mails.count == 1)
        let notice = try #require(mails.first)
        #expect(notice.recipient.address == "v@example.com")
        let composed = try #require(try h.service.mailComposer.compose(notice.intent, recipient: notice.recipient))
        guard case .phoneTransferRequested(let shown, _) = composed.message.content else {
            Issue.record("not the transfer notice: \(composed.message.content)")
            return
        }
        #expect(shown == "+49…")
        // The parties see the wait; V sees the request on its number.
        #expect(try Self.phones(h, u.session.idToken).map(\.status) == [.awaitingTransfer])
        let vView = try Self.phones(h, v.session.idToken)
        #expect(vView.map(\.status) == [.verified])
        #expect(vView[0].releaseRequestedUntil == h.clock.unixSeconds() + 3_600)
        // V releases it: U holds it, V does not.
        try h.service.phoneOwner.release(idToken: v.session.idToken, claimID: held.id)
        #expect(try Self.phones(h, u.session.idToken).map(\.status) == [.verified])
        #expect(try Self.phones(h, v.session.idToken).isEmpty)
        #expect(Self.events(h).suffix(2) == ["phone.removed", "phone.verified"])
        #expect(h.store.snapshot().phoneNumbers.count == 2)
    }

    @Test("the cool-off: without V's objection the number moves when it is over; an objection ends the claim")
    func transferByCoolOff() throws {
        let h = try Self.harness()
        let (_, _, u, asked) = try Self.transferWaiting(h)
        h.clock.advance(by: 3_599)
        #expect(try Self.phones(h, u.session.idToken).map(\.status) == [.awaitingTransfer])
        h.clock.advance(by: 1)
        // (The ID tokens of an hour ago expired meanwhile: sign in again.)
        let u2 = try h.signIn("u@example.com")
        #expect(try Self.phones(h, u2.session.idToken).map(\.status) == [.verified])
        #expect(try Self.phones(h, try h.signIn("v@example.com").session.idToken).isEmpty)

        // Now W claims it from U, and U objects: W's claim ends, U keeps the number.
        let w = try h.signIn("w@example.com")
        let third = try Self.add(h, w.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: w.session.idToken, claimID: third.id, code: third.code)
        let fresh = try h.signIn("u@example.com")
        try h.service.phoneOwner.object(idToken: fresh.session.idToken, claimID: asked)
        h.clock.advance(by: 7_200)
        let w2 = try h.signIn("w@example.com"), u3 = try h.signIn("u@example.com")
        #expect(try Self.phones(h, w2.session.idToken).isEmpty)
        #expect(try Self.phones(h, u3.session.idToken).map(\.status) == [.verified])
        expectAuthError("PHONE_CLAIM_STATE") { try h.service.phoneOwner.release(idToken: u3.session.idToken, claimID: asked) }
    }

    @Test("attacker: past the cool-off, with nobody having looked at the claims, the number signs in to its new account and never again to the old one")
    func coolOffOverAtPhoneSignIn() throws {
        let h = try Self.harness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
        }
        let (v, _, u, _) = try Self.transferWaiting(h)
        func signInByPhone() throws -> LoginDescriptor {
            try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: "192.0.2.1")
            return try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
        }
        // Within the cool-off the number still belongs to V, and signs in there.
        h.clock.advance(by: 3_000)
        let before = try signInByPhone()
        #expect(before.uid == v.uid && !before.isNewUser)
        // Over, and nobody listed the claims (which settled the move before): U's, at once.
        h.clock.advance(by: 600)
        let after = try signInByPhone()
        #expect(after.uid == u.uid && !after.isNewUser)
        #expect(Self.events(h).suffix(2) == ["phone.removed", "phone.verified"])
        // V's phone session ended with the move.
        expectAuthError("TOKEN_REVOKED") { _ = try h.service.sessions.refresh(before.session.refreshToken) }
        let again = try signInByPhone()
        #expect(again.uid == u.uid)
        #expect(try Self.phones(h, try h.signIn("v@example.com").session.idToken).isEmpty)
    }

    @Test("attacker: a fresh account claims the number of a phone-only account; the SMS names the asking account, the number never moves by cool-off, its holder is told by SMS, and only its release moves it")
    func phoneOnlyAccountKeepsItsNumber() throws {
        let h = try Self.harness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
        }
        func signInByPhone() throws -> LoginDescriptor {
            try h.service.phoneSignIn.send(phoneNumber: Self.number, locale: nil, idToken: nil, clientIP: nil)
            return try h.service.phoneSignIn.complete(phoneNumber: Self.number, code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
        }
        // V signs in by phone: no address, no password; the number is its only way in.
        let v = try signInByPhone()
        #expect(v.isNewUser && v.email == nil)
        let vSession = try Self.phoneSession(h, uid: v.uid)
        // A, freshly signed in, asks for V's number: the SMS says which account asks, masked.
        let a = try h.signIn("attacker@example.com")
        let claim = try h.service.phoneOwner.add(idToken: a.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        let sms = try #require(try h.lastSMS())
        #expect(sms.kind == .claimCode && sms.account == "a***@example.com")
        // V types the code (on the page the SMS links to): the claim waits, for V's release only.
        _ = try h.service.phoneHolder.prove(claimID: claim.claimID, code: sms.code)
        var asked = try Self.phones(h, a.session.idToken)
        #expect(asked.map(\.status) == [.awaitingTransfer])
        #expect(asked[0].transferDueAt == nil && asked[0].awaitingRelease)
        // V is told by SMS (it has no address to mail), naming the account that asks.
        let notice = try #require(try h.lastSMS())
        #expect(notice.kind == .transferAwaitingRelease && notice.account == "a***@example.com")
        #expect(h.store.queuedMail().allSatisfy { $0.recipient.address != "v@example.com" })
        let vView = try Self.phones(h, v.session.idToken)
        #expect(vView.map(\.status) == [.verified] && vView[0].awaitingRelease && vView[0].releaseRequestedUntil == nil)
        // Long past the cool-off, housekeeping and phone sign-in move nothing: V signs in to V.
        h.clock.advance(by: 30 * 86_400)
        #expect(try h.service.phoneSettlement.settleDueTransfers().moved == 0)
        let again = try signInByPhone()
        #expect(again.uid == v.uid && !again.isNewUser)
        #expect(h.store.snapshot().refreshTokens[vSession]?.revoked == false)
        let a2 = try h.signIn("attacker@example.com")
        asked = try Self.phones(h, a2.session.idToken)
        #expect(asked.map(\.status) == [.awaitingTransfer])
        // V's explicit release (a recent sign-in, by phone) is what moves it.
        try h.service.phoneOwner.release(idToken: again.session.idToken, claimID: try #require(vView.first?.claimID))
        #expect(try Self.phones(h, a2.session.idToken).map(\.status) == [.verified])
        #expect(h.store.snapshot().refreshTokens[vSession]?.revoked == true)
    }

    @Test("a holder with an address is mailed and loses the number by cool-off as before; the claim SMS of a holder-first claim names no account")
    func holderWithAddressMovesByCoolOff() throws {
        let h = try Self.harness()
        let holderSession = try h.signIn("holder@example.com").session
        _ = try h.signIn("u@example.com")
        _ = try h.service.phoneHolder.start(idToken: holderSession.idToken, phoneNumber: Self.number, email: "u@example.com", locale: nil, clientIP: nil)
        let holderFirst = try #require(try h.lastSMS())
        #expect(holderFirst.account == nil && holderFirst.accountWithoutAddress == false)
        let (_, _, u, _) = try Self.transferWaiting(h)
        let waiting = try Self.phones(h, u.session.idToken).filter { $0.status == .awaitingTransfer }
        #expect(waiting.count == 1 && !waiting[0].awaitingRelease && waiting[0].transferDueAt != nil)
        #expect(h.store.snapshot().sms.allSatisfy { if case .phoneTransferNotice = $0.intent { false } else { true } })
        h.clock.advance(by: 3_600)
        #expect(try h.service.phoneSettlement.settleDueTransfers().moved == 1)
    }

    @Test("housekeeping settles a transfer whose cool-off is over: the number moves, V's phone session ends, the events go out, though nobody looks")
    func coolOffOverAtHousekeeping() throws {
        let h = try Self.harness()
        let (v, _, _, _) = try Self.transferWaiting(h)
        let phoneSession = try Self.phoneSession(h, uid: v.uid)
        let service = h.service
        let housekeeper = Housekeeper(store: h.store, policy: RetentionPolicy(), clock: h.clock, settleDue: { try service.phoneSettlement.settleDueTransfers() })
        h.clock.advance(by: 3_599)
        #expect(try housekeeper.runRound().settledTransfers == 0)
        #expect(h.store.snapshot().refreshTokens[phoneSession]?.revoked == false)
        h.clock.advance(by: 1)
        #expect(try housekeeper.runRound().settledTransfers == 1)
        #expect(Self.events(h).suffix(2) == ["phone.removed", "phone.verified"])
        #expect(h.store.snapshot().refreshTokens[phoneSession]?.revoked == true)
        #expect(try Self.phones(h, try h.signIn("u@example.com").session.idToken).map(\.status) == [.verified])
        #expect(try Self.phones(h, try h.signIn("v@example.com").session.idToken).isEmpty)
        // Settled once: the next round finds nothing due.
        #expect(try housekeeper.runRound().settledTransfers == 0)
    }

    @Test("two claims wait for V's number: housekeeping moves it to the first due; the second's cool-off starts again against the new holder")
    func twoClaimsDueAtHousekeeping() throws {
        let h = try Self.harness()
        _ = try Self.transferWaiting(h)
        h.clock.advance(by: 60)
        let w = try h.signIn("w@example.com")
        let third = try Self.add(h, w.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: w.session.idToken, claimID: third.id, code: third.code)
        h.clock.advance(by: 3_600)
        let settled = try h.service.phoneSettlement.settleDueTransfers(limit: 1)
        #expect(settled.moved == 1 && settled.failed == 0)
        #expect(try Self.phones(h, try h.signIn("u@example.com").session.idToken).map(\.status) == [.verified])
        // W's claim was due too: now it waits for U, for a whole cool-off from now.
        let again = try h.service.phoneSettlement.settleDueTransfers()
        #expect(again.moved == 0 && again.failed == 0)
        let waiting = try Self.phones(h, try h.signIn("w@example.com").session.idToken)
        #expect(waiting.map(\.status) == [.awaitingTransfer])
        #expect(waiting.first?.transferDueAt == h.clock.unixSeconds() + 3_600)
    }

    @Test("when the number moves away, the old holder's sessions that signed in with it end; its other sessions go on")
    func movedNumberEndsItsSessions() throws {
        let h = try Self.harness()
        let (v, held, _, _) = try Self.transferWaiting(h)
        // A session of V that signed in with the number (as sign-in by phone issues them).
        let phoneSession = try Self.phoneSession(h, uid: v.uid)
        try h.service.phoneOwner.release(idToken: v.session.idToken, claimID: held)
        #expect(h.store.snapshot().refreshTokens[phoneSession]?.revoked == true)
        // V's ID tokens end (they do not say which sign-in they came from); its email session refreshes on.
        expectAuthError("INVALID_ID_TOKEN") { _ = try h.service.phoneOwner.list(idToken: v.session.idToken) }
        let refreshed = try h.service.sessions.refresh(v.session.refreshToken)
        #expect(try h.service.phoneOwner.list(idToken: refreshed.idToken).isEmpty)
    }

    @Test("both parties delete: the owner through /v1/me/phones, the holder through its code; the number is free again")
    func deletes() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let first = try Self.add(h, u.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: first.id, code: first.code)
        try h.service.phoneHolder.delete(claimID: first.id, code: first.code)
        #expect(try Self.phones(h, u.session.idToken).isEmpty)
        #expect(h.store.snapshot().phoneNumbers.isEmpty)
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.read(claimID: first.id, code: first.code) }
        let second = try Self.add(h, u.session.idToken)
        _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: second.id, code: second.code)
        try h.service.phoneOwner.delete(idToken: u.session.idToken, claimID: second.id)
        #expect(try Self.phones(h, u.session.idToken).isEmpty)
        #expect(h.store.snapshot().phoneNumbers.isEmpty)
        expectAuthError("PHONE_CLAIM_NOT_FOUND") { try h.service.phoneOwner.delete(idToken: u.session.idToken, claimID: second.id) }
        // The holder may refuse a claim it never asked for, before proving anything.
        let third = try Self.add(h, u.session.idToken)
        try h.service.phoneHolder.delete(claimID: third.id, code: third.code)
        #expect(try Self.phones(h, u.session.idToken).isEmpty)
        #expect(Self.events(h).filter { $0 == "phone.removed" }.count == 3)
    }

    @Test("wrong, replayed and expired codes; 6 wrong tries then the right code refused")
    func codes() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let a = try Self.add(h, u.session.idToken)
        let wrong = a.code == "000000" ? "000001" : "000000"
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.prove(claimID: a.id, code: wrong) }
        _ = try h.service.phoneHolder.prove(claimID: a.id, code: a.code)
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.prove(claimID: a.id, code: a.code) }  // replayed
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: a.id, code: a.code) }
        let b = try Self.add(h, u.session.idToken, "+4915100000002")
        h.clock.advance(by: 600)
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: b.id, code: b.code) }
        #expect(try h.lastSMS() == nil)  // an expired claim sends nothing
        let fresh = try h.signIn("u@example.com")
        let c = try Self.add(h, fresh.session.idToken, "+4915100000003")
        let wrongC = c.code == "000000" ? "000001" : "000000"
        for _ in 0..<5 {
            expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneOwner.prove(idToken: fresh.session.idToken, claimID: c.id, code: wrongC) }
        }
        // The sixth meets the number's guessing budget (locked for 30 s); past it, the claim's 5 tries.
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") { _ = try h.service.phoneOwner.prove(idToken: fresh.session.idToken, claimID: c.id, code: wrongC) }
        h.clock.advance(by: 30)
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneOwner.prove(idToken: fresh.session.idToken, claimID: c.id, code: wrongC) }
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneOwner.prove(idToken: fresh.session.idToken, claimID: c.id, code: c.code) }
        expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.read(claimID: c.id, code: c.code) }
        #expect(h.store.snapshot().phoneClaims[c.id]?.wrongTries == 5)
        // Malformed input is an argument error, naming the field, before any lookup.
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.phoneHolder.prove(claimID: c.id, code: "12345") }
        expectAuthError("INVALID_ARGUMENT") { _ = try h.service.phoneHolder.prove(claimID: c.id, code: "１２３４５６") }
    }

    @Test("attacker: a code proved for claim A is refused on claim B, and cannot read B; a stolen claim id without the code reads nothing")
    func attacks() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let victim = try h.signIn("victim@example.com")
        let a = try Self.add(h, u.session.idToken, "+4915100000004")
        _ = try h.service.phoneHolder.prove(claimID: a.id, code: a.code)
        let b = try Self.add(h, victim.session.idToken, "+4915100000005")
        if a.code != b.code {
            expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.prove(claimID: b.id, code: a.code) }
            expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.read(claimID: b.id, code: a.code) }
            expectAuthError("INVALID_PHONE_CODE") { try h.service.phoneHolder.delete(claimID: b.id, code: a.code) }
        }
        // The owner's session cannot prove another account's claim, even with its code.
        expectAuthError("PHONE_CLAIM_NOT_FOUND") { _ = try h.service.phoneOwner.prove(idToken: u.session.idToken, claimID: b.id, code: b.code) }
        // A stolen claim id: every guess counts against the claim and its number's budget, which
        // the guesses above with A's code began: past 5 the number is locked.
        var refusals: [String] = []
        for guess in ["111111", "222222", "333333", "444444", "555555"] where guess != b.code {
            refusals.append(FlowPhoneGuessBudgetTests.answer { _ = try h.service.phoneHolder.read(claimID: b.id, code: guess) })
        }
        let counted = refusals.prefix { $0 == "INVALID_PHONE_CODE" }.count
        #expect(refusals.dropFirst(counted).allSatisfy { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" })
        #expect(h.store.snapshot().phoneClaims[b.id]?.wrongTries ?? 0 <= 5)
        #expect(try Self.phones(h, victim.session.idToken).map(\.status) == [.awaitingCode] || b.code.count == 6)
        // An unknown claim id answers exactly as a wrong code does.
        let unknown = expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.read(claimID: "AAAAAAAAAAAAAAAAAAAAAA", code: "123456") }
        let wrong = expectAuthError("INVALID_PHONE_CODE") { _ = try h.service.phoneHolder.read(claimID: a.id, code: a.code == "999999" ? "999998" : "999999") }
        #expect(unknown == wrong)
        // The victim's number was never verified anywhere.
        #expect(h.store.snapshot().phoneNumbers.count == 1)
    }

    @Test("an SMS is composed only for the claim's own number, only while it waits for the code")
    func composeBinds() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let a = try Self.add(h, u.session.idToken)
        let other = try PhoneNumber.parse("+4915100000009", defaultRegion: nil)
        #expect(try h.service.smsComposer.composeSMS(.phoneClaim(claimID: a.id), recipient: other) == nil)
        #expect(try h.service.smsComposer.composeSMS(.phoneClaim(claimID: "no-such-claim"), recipient: other) == nil)
        let mine = try PhoneNumber.parse(Self.number, defaultRegion: nil)
        #expect(try h.service.smsComposer.composeSMS(.phoneClaim(claimID: a.id), recipient: mine)?.code == a.code)
    }

    @Test("the store holds no number and no code: only keyed hashes and the country code")
    func nothingInTheClear() throws {
        let h = try Self.harness()
        let u = try h.signIn("u@example.com")
        let a = try Self.add(h, u.session.idToken)
        let claim = try #require(h.store.snapshot().phoneClaims[a.id])
        #expect(claim.countryCode == "49")
        #expect(claim.numberHash.count == 32 && claim.codeHash.count == 32)
        let text = String(decoding: claim.numberHash + claim.codeHash, as: UTF8.self)
        #expect(!text.contains("15112345678") && !text.contains(a.code))
    }
}
