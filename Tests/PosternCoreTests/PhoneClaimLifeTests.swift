import PosternCore
import Testing

@Suite("A phone claim's life as a value")
struct PhoneClaimLifeTests {
    static func claim(owner: Bool = true, now: Int64 = 1_000) -> PhoneClaim {
        PhoneClaim(
            id: "claim-a", uid: "U", numberHash: [1, 2, 3], countryCode: "49", codeHash: [9], createdAt: now,
            codeExpiresAt: now + 600, expiresAt: now + 600, ownerApprovedAt: owner ? now : nil)
    }

    @Test("owner first: pending until the holder proves the code, then both agreed")
    func ownerFirst() {
        var life = PhoneClaimLife(Self.claim())
        #expect(life.phase(now: 1_001) == .awaitingCode)
        #expect(!life.bothAgreed)
        #expect(life.checkCode(matches: true, proving: true, now: 1_100) == .proved)
        #expect(life.bothAgreed)
        #expect(life.settle(holder: nil, released: false, coolOff: 100, now: 1_100) == .verify)
        #expect(life.phase(now: 1_100) == .verified)
    }

    @Test("holder first: proved, awaiting the owner's approval within its window, then both agreed")
    func holderFirst() {
        var life = PhoneClaimLife(Self.claim(owner: false))
        #expect(life.settle(holder: nil, released: false, coolOff: 100, now: 1_001) == .nothing)
        #expect(life.checkCode(matches: true, proving: true, now: 1_100) == .proved)
        #expect(life.phase(now: 1_100) == .awaitingApproval)
        #expect(!life.bothAgreed)
        #expect(life.settle(holder: nil, released: false, coolOff: 100, now: 1_100) == .nothing)
        life.extendForApproval(86_400, now: 1_100)
        // Past the code's 10 minutes the approval is still open.
        #expect(life.phase(now: 2_000) == .awaitingApproval)
        do { let approved = life.approve(now: 2_000); #expect(approved) }
        #expect(life.bothAgreed)
        #expect(life.settle(holder: nil, released: false, coolOff: 100, now: 2_000) == .verify)
    }

    @Test("an approval is refused before the holder's proof, after its window, and twice")
    func approvalRefusals() {
        var life = PhoneClaimLife(Self.claim(owner: false))
        do { let approved = life.approve(now: 1_001); #expect(!approved) }
        #expect(life.checkCode(matches: true, proving: true, now: 1_100) == .proved)
        do { let approved = life.approve(now: 1_600 + 1); #expect(!approved) }  // the unextended life ended with the code's
        life.extendForApproval(86_400, now: 1_100)
        do { let approved = life.approve(now: 1_700); #expect(approved) }
        do { let approved = life.approve(now: 1_701); #expect(!approved) }
    }

    @Test("an approval needs an account: a claim naming no account never completes")
    func noAccount() {
        var claim = Self.claim(owner: false)
        claim.uid = nil
        var life = PhoneClaimLife(claim)
        #expect(life.checkCode(matches: true, proving: true, now: 1_100) == .proved)
        life.extendForApproval(86_400, now: 1_100)
        do { let approved = life.approve(now: 1_200); #expect(!approved) }
    }

    @Test("5 wrong codes, then the right one is refused; a 6th wrong one is not even counted")
    func wrongTries() {
        var life = PhoneClaimLife(Self.claim())
        for _ in 0..<5 { #expect(life.checkCode(matches: false, proving: true, now: 1_010) == .wrong) }
        #expect(life.checkCode(matches: true, proving: true, now: 1_011) == .locked)
        #expect(life.checkCode(matches: false, proving: true, now: 1_012) == .locked)
        #expect(life.claim.wrongTries == 5)
        #expect(life.claim.holderProvedAt == nil)
        #expect(life.phase(now: 1_013) == .expired)
    }

    @Test("the code dies after 10 minutes; a replayed proof is refused; the holder's read works after the proof")
    func expiryAndReplay() {
        var expired = PhoneClaimLife(Self.claim())
        #expect(expired.checkCode(matches: true, proving: true, now: 1_600) == .expired)
        #expect(expired.checkCode(matches: true, proving: false, now: 1_600) == .expired)
        var life = PhoneClaimLife(Self.claim())
        #expect(life.checkCode(matches: true, proving: false, now: 1_100) == .holder)
        #expect(life.claim.holderProvedAt == nil)
        #expect(life.checkCode(matches: true, proving: true, now: 1_100) == .proved)
        #expect(life.checkCode(matches: true, proving: true, now: 1_101) == .replayed)
        // Long after, the proved code still reads (and deletes) the claim.
        #expect(life.checkCode(matches: true, proving: false, now: 900_000) == .holder)
    }

    @Test("a number held by V: the transfer starts, waits, and moves on release or after the cool-off")
    func transfer() {
        var life = PhoneClaimLife(Self.claim())
        _ = life.checkCode(matches: true, proving: true, now: 1_100)
        #expect(life.settle(holder: "V", released: false, coolOff: 500, now: 1_100) == .startTransfer(from: "V", dueAt: 1_600))
        #expect(life.phase(now: 1_100) == .awaitingTransfer)
        #expect(life.settle(holder: "V", released: false, coolOff: 500, now: 1_599) == .waiting)
        #expect(life.settle(holder: "V", released: false, coolOff: 500, now: 1_600) == .move(from: "V"))
        var released = life
        #expect(released.settle(holder: "V", released: true, coolOff: 500, now: 1_200) == .move(from: "V"))
        // The number moved to W meanwhile: a new cool-off from W.
        #expect(life.settle(holder: "W", released: false, coolOff: 500, now: 1_300) == .startTransfer(from: "W", dueAt: 1_800))
        // V let it go (nobody holds it): verified at once.
        #expect(life.settle(holder: nil, released: false, coolOff: 500, now: 1_400) == .verify)
        life.moved(now: 1_400)
        #expect(life.phase(now: 1_400) == .verified)
    }

    @Test("the redacted number shows the country calling code only")
    func redacted() {
        #expect(Self.claim().redactedNumber == "+49…")
    }
}
