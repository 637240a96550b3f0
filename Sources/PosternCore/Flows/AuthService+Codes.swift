import Foundation
import PosternCrypto

extension AuthService {
    /// The state a request's code is bound to, computed the same way when minting (content stage)
    /// and when verifying: nil when the state it needs is gone (account deleted, address moved).
    static func binding(for request: ActionRequest, tx: any StoreReader) throws -> StateBinding? {
        switch request.purpose {
        case .signIn, .signUp:
            return StateBinding(request.id, request.email.normalized)
        case .resetPassword:
            guard let uid = request.uid, let account = try tx.account(uid: uid), account.email == request.email else {
                return nil
            }
            return account.credentialBinding
        case .verifyEmail:
            guard let uid = request.uid, let account = try tx.account(uid: uid), account.email == request.email else {
                return nil
            }
            return StateBinding(uid, request.email.normalized)
        case .changeEmail:
            // email: the new address; otherEmail: the account's address when the change was asked.
            guard let uid = request.uid, let old = request.otherEmail, let account = try tx.account(uid: uid),
                account.email == old
            else { return nil }
            return StateBinding(uid, old.normalized, request.email.normalized)
        case .recoverEmail:
            // email: the old address (the recipient); otherEmail: the address the account moved to.
            guard let uid = request.uid, let moved = request.otherEmail, let account = try tx.account(uid: uid),
                account.email == moved
            else { return nil }
            return StateBinding(uid, moved.normalized, request.email.normalized)
        }
    }

    /// The request id a code's nonce names.
    static func requestID(of code: ActionCode) -> String { Base64URL.encode(code.nonce) }

    /// The 6-digit code of a sign-in request: derived from its id under the key `keyID`, so the
    /// store keeps no code and the hosted page can show it to whoever holds the link.
    static func sixDigitCode(requestID: String, keyID: UInt32, ring: KeyRing) -> String? {
        guard let mac = ring.actionCodes.digest(Array("six-digit-code|\(requestID)".utf8), keyID: keyID) else { return nil }
        let value = UInt32(mac[0]) << 24 | UInt32(mac[1]) << 16 | UInt32(mac[2]) << 8 | UInt32(mac[3])
        let digits = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// What a pasted text holds (a link, a bare oobCode, or 6 digits), validated against the
    /// public URL and allowed hosts; consumes nothing.
    /// - Throws: `AuthError.invalidCode` with a reason a person can act on.
    public func readPasted(_ text: String) throws(AuthError) -> PastedAction {
        try codeInput(link: text, oobCode: nil, code: nil)
    }

    /// Extracts the oobCode (or 6 digits) from what a caller sent: a pasted `link`, an `oobCode`
    /// or a `code`.
    func codeInput(link: String?, oobCode: String?, code: String?) throws(AuthError) -> PastedAction {
        if let link, !link.isEmpty {
            do { return try parser.parse(link) } catch { throw .invalidCode(error.message) }
        }
        if let oobCode, !oobCode.isEmpty { return .oobCode(oobCode) }
        if let code, !code.isEmpty {
            guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidArgument("code must be the 6 digits from the mail.")
            }
            return .sixDigitCode(code)
        }
        throw .invalidArgument("Give link, oobCode or code.")
    }

    /// Verifies an oobCode and loads its request, checking that it is unused and still bound to
    /// the current state. `expecting` nil accepts any action.
    func verifiedRequest(
        _ text: String, expecting: EmailAction?, ring: KeyRing, now: Int64, tx: any StoreReader
    ) throws -> (ActionCode, ActionRequest) {
        func refuse(_ error: ActionCodeError) -> AuthError {
            metrics.refused(error.reason.rawValue)
            return .code(error)
        }
        let code: ActionCode
        do { code = try ring.actionCodes.verify(text, now: now) } catch { throw refuse(error) }
        if let expecting, code.action != expecting { throw refuse(.wrongAction) }
        guard let request = try tx.actionRequest(id: Self.requestID(of: code)), request.purpose.action == code.action else {
            throw refuse(.stateChanged)
        }
        if try request.consumedAt != nil || tx.isConsumed(nonce: code.nonce) { throw refuse(.alreadyUsed) }
        guard let binding = try Self.binding(for: request, tx: tx), ConstantTime.equals(binding.bytes, code.binding.bytes) else {
            throw refuse(.stateChanged)
        }
        return (code, request)
    }

    /// Mints the code of `request` and builds its link; nil when the state it binds to is gone.
    func mintLink(for request: ActionRequest, ring: KeyRing, now: Int64, tx: any StoreReader) throws -> (link: String, code: String)? {
        guard let binding = try Self.binding(for: request, tx: tx), let nonce = Base64URL.decode(request.id) else {
            return nil
        }
        let minted = try ring.actionCodes.mint(
            request.purpose.action, binding: binding, ttl: request.expiresAt - now, now: now, nonce: nonce)
        let link = LinkMaker(publicURL: config.publicURL).link(
            mode: request.purpose.action, code: minted.text, continueURL: request.continueURL, lang: request.locale)
        return (link, minted.text)
    }

    /// Marks a request's code as used, in the caller's transaction; false when it already was.
    func consume(_ request: ActionRequest, expiresAt: Int64, now: Int64, tx: any StoreWriter) throws -> Bool {
        guard let nonce = Base64URL.decode(request.id), try tx.consume(nonce: nonce, expiresAt: expiresAt) else {
            return false
        }
        metrics.consumed(request.purpose.action)
        var used = request
        used.consumedAt = now
        try tx.updateActionRequest(used)
        return true
    }
}

extension ActionCodeAuthority {
    /// HMAC of `message` under the key `keyID` (active or retired), or nil when the ring has no such key.
    public func digest(_ message: [UInt8], keyID: UInt32) -> [UInt8]? {
        key(id: keyID)?.mac.authenticate(message)
    }
}
