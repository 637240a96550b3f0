import Foundation
import PosternCore
import PosternCrypto
import Testing
import PosternTestSupport
import Synchronization

@Suite("Action codes")
struct ActionCodeTests {
    let clock = ManualClock()
    let authority: ActionCodeAuthority
    let binding = StateBinding("uid-1", "a@example.com", "")

    init() throws {
        authority = ActionCodeAuthority(active: try .init(id: 7, secret: SecureRandom.bytes(32)), retired: [])
    }

    @Test("a minted code verifies, is 83 base64url characters and carries no personal data")
    func roundTrip() throws {
        let minted = try authority.mint(.resetPassword, binding: binding, ttl: 3600, now: clock.unixSeconds())
        #expect(minted.text.count == ActionCode.textLength)
        #expect(minted.text.utf8.allSatisfy { Base64URL.isSymbol($0) })
        #expect(!minted.text.contains("example"))
        let code = try authority.verify(minted.text, expecting: .resetPassword, binding: binding, now: clock.unixSeconds())
        #expect(code.keyID == 7)
        #expect(code.expiresAt == clock.unixSeconds() + 3600)
        #expect(code.nonce.count == 16)
        let other = try authority.mint(.resetPassword, binding: binding, ttl: 3600, now: clock.unixSeconds())
        #expect(other.text != minted.text, "each code has its own nonce")
    }

    @Test("changing any single character makes the code invalid")
    func everySingleChangeIsRefused() throws {
        let minted = try authority.mint(.signIn, binding: binding, ttl: 600, now: clock.unixSeconds())
        let alphabet = Array(Base64URL.alphabet)
        let original = Array(minted.text)
        var tried = 0
        for index in original.indices {
            for replacement in alphabet where replacement != original[index] {
                var altered = original
                altered[index] = replacement
                tried += 1
                #expect(throws: ActionCodeError.self) {
                    try authority.verify(String(altered), now: clock.unixSeconds())
                }
            }
        }
        #expect(tried == 83 * 63)
        for garbage in ["", "x", String(minted.text.dropLast()), minted.text + "A", String(repeating: "A", count: 83)] {
            #expect(throws: ActionCodeError.self) { try authority.verify(garbage, now: clock.unixSeconds()) }
        }
    }

    @Test("a code expires at its expiry and says so")
    func expiry() throws {
        let minted = try authority.mint(.signIn, binding: binding, ttl: 600, now: clock.unixSeconds())
        clock.advance(by: 599)
        _ = try authority.verify(minted.text, now: clock.unixSeconds())
        clock.advance(by: 1)
        let error = #expect(throws: ActionCodeError.self) { try authority.verify(minted.text, now: clock.unixSeconds()) }
        #expect(error?.reason == .expired)
        #expect(error?.publicCode.rawValue == "EXPIRED_OOB_CODE")
    }

    @Test("a code for another action is refused")
    func wrongAction() throws {
        let minted = try authority.mint(.verifyEmail, binding: binding, ttl: 600, now: clock.unixSeconds())
        let error = #expect(throws: ActionCodeError.self) {
            try authority.verify(minted.text, expecting: .resetPassword, binding: binding, now: clock.unixSeconds())
        }
        #expect(error?.reason == .wrongAction)
        #expect(error?.publicCode.rawValue == "INVALID_OOB_CODE")
    }

    @Test("a password change kills outstanding reset codes")
    func passwordChangeKillsResetCodes() throws {
        var account = Account(uid: "u1", email: try EmailAddress.parse("a@example.com"), passwordHash: "$scrypt$old", createdAt: 0)
        let minted = try authority.mint(.resetPassword, binding: account.credentialBinding, ttl: 3600, now: clock.unixSeconds())
        _ = try authority.verify(minted.text, expecting: .resetPassword, binding: account.credentialBinding, now: clock.unixSeconds())
        account.passwordHash = "$scrypt$new"
        let error = #expect(throws: ActionCodeError.self) {
            try authority.verify(minted.text, expecting: .resetPassword, binding: account.credentialBinding, now: clock.unixSeconds())
        }
        #expect(error?.reason == .stateChanged)
    }

    @Test("a code signed by a key the ring does not hold is refused")
    func foreignKey() throws {
        let other = ActionCodeAuthority(active: try .init(id: 7, secret: SecureRandom.bytes(32)), retired: [])
        let minted = try other.mint(.signIn, binding: binding, ttl: 600, now: clock.unixSeconds())
        let error = #expect(throws: ActionCodeError.self) { try authority.verify(minted.text, now: clock.unixSeconds()) }
        #expect(error?.reason == .badSignature)
    }

    @Test("state bindings separate their parts")
    func bindingParts() {
        #expect(StateBinding("ab", "c") != StateBinding("a", "bc"))
        #expect(StateBinding("ab", "c") == StateBinding("ab", "c"))
    }
}

@Suite("Key ring rotation")
struct KeyRingTests {
    let clock = ManualClock()
    let store = InMemoryStore()

    func vault(rsaKeys: RSAKeySource = .madeOncePerProcess) throws -> KeyVault {
        KeyVault(
            store: store, box: try SecretBox(key: Array(repeating: 9, count: 32)), clock: clock, maxCodeLifetime: 3600, rsaKeys: rsaKeys)
    }

    @Test("a retired key still verifies until its codes expire; a removed key does not")
    func rotation() throws {
        let keys = try vault()
        let ring = try keys.prepare()
        let minted = try ring.actionCodes.mint(.signIn, binding: StateBinding("x"), ttl: 3600, now: clock.unixSeconds())

        try keys.rotate(.actionCode)
        let rotated = try keys.open()
        #expect(rotated.actionCodes.activeKeyID != ring.actionCodes.activeKeyID)
        _ = try rotated.actionCodes.verify(minted.text, now: clock.unixSeconds())
        let fresh = try rotated.actionCodes.mint(.signIn, binding: StateBinding("x"), ttl: 3600, now: clock.unixSeconds())
        #expect(throws: ActionCodeError.self) { try ring.actionCodes.verify(fresh.text, now: clock.unixSeconds()) }

        clock.advance(by: 3599)
        _ = try keys.prepare().actionCodes.verify(minted.text, now: clock.unixSeconds())

        clock.advance(by: 1)
        let pruned = try keys.prepare()
        #expect(try keys.list().filter { $0.purpose == .actionCode }.count == 1)
        let error = #expect(throws: ActionCodeError.self) {
            try pruned.actionCodes.verify(minted.text, now: clock.unixSeconds() - 1)
        }
        #expect(error?.reason == .unknownKey)
    }

    @Test("the ID-token ring publishes retired keys in the JWKS until they expire")
    func idTokenRotation() throws {
        let keys = try vault()
        let first = try keys.prepare()
        let ecKeys = { (ring: KeyRing) in ring.jwks["keys"]?.filter { $0["kty"] == "EC" }.count }
        #expect(ecKeys(first) == 1)
        try keys.rotate(.idToken)
        let second = try keys.open()
        #expect(ecKeys(second) == 2)
        #expect(second.idTokenSigner.keyID != first.idTokenSigner.keyID)
        #expect(second.idTokenRSASigner.keyID == first.idTokenRSASigner.keyID, "one purpose rotates alone")
        clock.advance(by: 3600)
        #expect(ecKeys(try keys.prepare()) == 1)
    }

    @Test("the RS256 key is made beside the ES256 one, rotates by the same rules, and is published after the ES256 keys")
    func rsaRotation() throws {
        let keys = try vault(rsaKeys: .generating)
        let first = try keys.prepare()
        #expect(first.jwks["keys"]?.map { $0["alg"] } == ["ES256", "RS256"])
        #expect(first.jwks["keys"]?.last?["kid"] == first.idTokenRSASigner.keyID)
        let record = try #require(try keys.list().first { $0.purpose == .idTokenRSA })
        #expect(record.status == .active && String(record.id) == first.idTokenRSASigner.keyID)
        let claims = Data(#"{"sub":"u1"}"#.utf8)
        let token = try JSONWebToken.parse(try JSONWebToken.sign(claims: claims, with: first.idTokenSigner(.rs256)))
        #expect(token.algorithm == .rs256 && token.keyID == first.idTokenRSASigner.keyID)

        try keys.rotate(.idTokenRSA)
        let second = try keys.open()
        #expect(second.idTokenRSASigner.keyID != first.idTokenRSASigner.keyID)
        #expect(second.idTokenSigner.keyID == first.idTokenSigner.keyID, "one purpose rotates alone")
        #expect(second.jwks["keys"]?.map { $0["alg"] } == ["ES256", "RS256", "RS256"])
        #expect(second.idTokenRSAVerifiers.map(\.keyID) == [second.idTokenRSASigner.keyID, first.idTokenRSASigner.keyID])
        // The retired key still verifies what it signed; the new one does not.
        let retired = try #require(second.publishedKey(keyID: token.keyID))
        #expect(token.isSigned(by: retired) && !token.isSigned(by: second.idTokenRSASigner))
        #expect(try keys.list().first { $0.id == record.id }?.verifyUntil == clock.unixSeconds() + 3600)

        clock.advance(by: 3599)
        #expect(try keys.prepare().publishedKey(keyID: token.keyID) != nil)
        clock.advance(by: 1)
        let pruned = try keys.prepare()
        #expect(pruned.publishedKey(keyID: token.keyID) == nil)
        #expect(pruned.jwks["keys"]?.map { $0["alg"] } == ["ES256", "RS256"])
    }

    @Test("an RSA key is made only when its purpose has no active key: not at every start")
    func rsaKeyMadeOnlyWhenMissing() throws {
        let made = Mutex(0)
        let counting = RSAKeySource {
            made.withLock { $0 += 1 }
            return try RSAKeySource.madeOncePerProcess.privateKeyDER()
        }
        let keys = try vault(rsaKeys: counting)
        let first = try keys.prepare()
        #expect(made.withLock { $0 } == 1)
        let again = try keys.prepare()
        #expect(made.withLock { $0 } == 1)
        #expect(again.idTokenRSASigner.keyID == first.idTokenRSASigner.keyID)
        try keys.rotate(.idTokenRSA)
        #expect(made.withLock { $0 } == 2)
        #expect(try keys.list().filter { $0.purpose == .idTokenRSA }.map(\.status) == [.active, .retired])
    }

    @Test("the key a kid names: either kind for the provider's tokens, none for an unknown kid")
    func publishedKey() throws {
        let ring = try vault().prepare()
        #expect(ring.publishedKey(keyID: ring.idTokenSigner.keyID)?.algorithm == .es256)
        #expect(ring.publishedKey(keyID: ring.idTokenRSASigner.keyID)?.algorithm == .rs256)
        #expect(ring.idTokenSigner(.es256).keyID == ring.idTokenSigner.keyID)
        #expect(ring.idTokenSigner(.rs256).keyID == ring.idTokenRSASigner.keyID)
        #expect(ring.publishedKey(keyID: "0") == nil)
    }

    @Test("secrets are sealed: the stored bytes are not the key, and another master key cannot open them")
    func sealed() throws {
        _ = try vault().prepare()
        let other = KeyVault(store: store, box: try SecretBox(key: Array(repeating: 1, count: 32)), clock: clock, maxCodeLifetime: 3600)
        #expect(throws: CryptoError.self) { try other.open() }
    }
}
