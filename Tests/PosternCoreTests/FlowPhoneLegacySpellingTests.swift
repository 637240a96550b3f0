import Foundation
@testable import PosternCore
import PosternTestSupport
import Testing

/// The upgrade to libphonenumber: a number verified under a spelling the old parser kept
/// (`+490151…`, 04a969a) is found under that spelling's keyed hash only. The flows re-key its
/// holding to the canonical hash on first use, so the account keeps its number.
@Suite("Phone numbers verified under an old spelling: re-keyed on first use, never lost")
struct FlowPhoneLegacySpellingTests {
    /// Canonical; the old parser stored `+49 0151 12345678` as typed.
    static let number = "+4915112345678"
    static let legacy = "+49015112345678"

    static func harness() throws -> FlowHarness {
        try FlowHarness {
            $0.phoneSignIn = true
            $0.sms.phoneSignIn = true
            $0.webhooks = WebhookConfiguration(endpoints: ["https://hooks.example.com/a"])
        }
    }

    static func hash(_ h: FlowHarness, _ e164: String) -> [UInt8] {
        PhoneKeys.numberHash(e164: e164, ring: h.service.context.keys.current)
    }

    /// The claim and holding of `e164` for the account `uid`, as ``heldAsBefore`` writes them (the account exists).
    static func alsoHeldAsBefore(_ h: FlowHarness, _ e164: String, uid: String) throws -> String {
        let numberHash = hash(h, e164)
        let claimID = UUID().uuidString
        let now = h.clock.unixSeconds()
        try h.store.write { tx in
            try tx.insertPhoneClaim(PhoneClaim(
                id: claimID, uid: uid, numberHash: numberHash, countryCode: "49", codeHash: [1], createdAt: now, codeExpiresAt: now,
                expiresAt: now, ownerApprovedAt: now, holderProvedAt: now, verifiedAt: now))
            #expect(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: numberHash, uid: uid, claimID: claimID, verifiedAt: now)))
        }
        return claimID
    }

    /// What the sign-in flow before libphonenumber wrote for a phone sign-up with `e164` as the
    /// old parser kept it: a phone-only account, a verified claim, the holding, under the hash of
    /// that text. Returns the account's uid and the claim's id.
    @discardableResult
    static func heldAsBefore(_ h: FlowHarness, _ e164: String, uid: String = UUID().uuidString) throws -> (uid: String, claimID: String) {
        let numberHash = hash(h, e164)
        let claimID = UUID().uuidString
        let now = h.clock.unixSeconds()
        try h.store.write { tx in
            try tx.insertAccount(Account(uid: uid, createdAt: now, providers: [.phone]))
            try tx.insertPhoneClaim(PhoneClaim(
                id: claimID, uid: uid, numberHash: numberHash, countryCode: "49", codeHash: [1], createdAt: now, codeExpiresAt: now,
                expiresAt: now, ownerApprovedAt: now, holderProvedAt: now, verifiedAt: now))
            #expect(try tx.holdPhoneNumber(PhoneNumberHolder(numberHash: numberHash, uid: uid, claimID: claimID, verifiedAt: now)))
        }
        return (uid, claimID)
    }

    static func signInByPhone(_ h: FlowHarness, _ typed: String) throws -> LoginDescriptor {
        try h.service.phoneSignIn.send(phoneNumber: typed, locale: nil, idToken: nil, clientIP: nil)
        return try h.service.phoneSignIn.complete(phoneNumber: typed, code: try h.lastSMSCode(), idToken: nil, allowMigration: nil)
    }

    @Test("a phone-only account verified as +490151… signs in with +49 151…: the same account, the holding re-keyed with its claim")
    func phoneOnlyAccountKeepsItsNumber() throws {
        let h = try Self.harness()
        let old = try Self.heldAsBefore(h, Self.legacy)
        let login = try Self.signInByPhone(h, "+49 151 12345678")
        #expect(login.uid == old.uid && !login.isNewUser)
        #expect(h.store.snapshot().accounts.count == 1)
        let holdings = h.store.snapshot().phoneNumbers
        #expect(holdings[Self.hash(h, Self.number)]?.uid == old.uid && holdings[Self.hash(h, Self.number)]?.claimID == old.claimID)
        #expect(holdings[Self.hash(h, Self.legacy)] == nil && holdings.count == 1)
        #expect(h.store.snapshot().phoneClaims[old.claimID]?.numberHash == Self.hash(h, Self.number))
        // The account lists its one number, verified; typed the old way, it signs in to it again.
        #expect(try h.service.phoneOwner.list(idToken: login.session.idToken).map(\.status) == [.verified])
        #expect(try Self.signInByPhone(h, "+49 0151 12345678").uid == old.uid)
    }

    @Test("each spelling the old parser kept is found: +4900151… too")
    func doubleTrunkPrefix() throws {
        let h = try Self.harness()
        let old = try Self.heldAsBefore(h, "+490015112345678")
        #expect(try Self.signInByPhone(h, Self.number).uid == old.uid)
        #expect(h.store.snapshot().phoneNumbers[Self.hash(h, Self.number)]?.uid == old.uid)
    }

    @Test("held in both spellings by two accounts: the canonical holding signs in, the other stays untouched (no merge)")
    func bothSpellingsHeld() throws {
        let h = try Self.harness()
        let canonical = try Self.heldAsBefore(h, Self.number)
        let legacy = try Self.heldAsBefore(h, Self.legacy)
        #expect(try Self.signInByPhone(h, Self.number).uid == canonical.uid)
        let holdings = h.store.snapshot().phoneNumbers
        #expect(holdings[Self.hash(h, Self.number)]?.uid == canonical.uid)
        #expect(holdings[Self.hash(h, Self.legacy)]?.uid == legacy.uid)
        #expect(h.store.snapshot().phoneClaims[legacy.claimID]?.numberHash == Self.hash(h, Self.legacy))
        #expect(h.store.snapshot().accounts.count == 2)
    }

    @Test("two old spellings held by two accounts, none canonical: the first spelling (+CC0…) is re-keyed, the other stays")
    func twoLegacySpellingsHeld() throws {
        let h = try Self.harness()
        let double = try Self.heldAsBefore(h, "+490015112345678")
        let single = try Self.heldAsBefore(h, Self.legacy)
        #expect(try Self.signInByPhone(h, Self.number).uid == single.uid)
        let holdings = h.store.snapshot().phoneNumbers
        #expect(holdings[Self.hash(h, Self.number)]?.uid == single.uid)
        #expect(holdings[Self.hash(h, "+490015112345678")]?.uid == double.uid)
    }

    @Test("another account claims the number typed canonically: the old holder is found, and a phone-only one must release it")
    func claimFindsTheOldHolder() throws {
        let h = try Self.harness()
        let old = try Self.heldAsBefore(h, Self.legacy)
        let a = try h.signIn("attacker@example.com")
        let claim = try h.service.phoneOwner.add(idToken: a.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        _ = try h.service.phoneHolder.prove(claimID: claim.claimID, code: try h.lastSMSCode())
        let asked = try h.service.phoneOwner.list(idToken: a.session.idToken)
        #expect(asked.map(\.status) == [.awaitingTransfer] && asked[0].awaitingRelease)
        #expect(h.store.snapshot().phoneNumbers[Self.hash(h, Self.number)]?.uid == old.uid)
        // Long past any cool-off the number stays with its phone-only account.
        h.clock.advance(by: 30 * 86_400)
        #expect(try h.service.phoneSettlement.settleDueTransfers().moved == 0)
        #expect(try Self.signInByPhone(h, Self.number).uid == old.uid)
    }

    @Test("a phone-only account that verified both spellings: the old one is the same number, not another way in, so a claim waits for release")
    func sameAccountHoldsBothSpellings() throws {
        let h = try Self.harness()
        let held = try Self.heldAsBefore(h, Self.number)
        let twin = try Self.alsoHeldAsBefore(h, Self.legacy, uid: held.uid)
        let a = try h.signIn("attacker@example.com")
        let claim = try h.service.phoneOwner.add(idToken: a.session.idToken, phoneNumber: Self.number, locale: nil, clientIP: nil)
        _ = try h.service.phoneHolder.prove(claimID: claim.claimID, code: try h.lastSMSCode())
        let asked = try h.service.phoneOwner.list(idToken: a.session.idToken)
        #expect(asked.map(\.status) == [.awaitingTransfer] && asked[0].awaitingRelease && asked[0].transferDueAt == nil)
        // The old spelling's holding is gone (said as phone.removed); the number's own stays.
        #expect(h.store.snapshot().phoneClaims[twin] == nil && h.store.snapshot().phoneNumbers[Self.hash(h, Self.legacy)] == nil)
        #expect(h.store.snapshot().webhooks.map(\.eventType).contains("phone.removed"))
        h.clock.advance(by: 30 * 86_400)
        #expect(try h.service.phoneSettlement.settleDueTransfers().moved == 0)
        #expect(try Self.signInByPhone(h, Self.number).uid == held.uid)
    }
}
