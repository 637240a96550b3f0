extension AuthorizationCodeRecord {
    /// Why a token request may not redeem a code: each is `invalid_grant` on the wire (RFC 6749
    /// §5.2), the reason only for logs and tests.
    public enum RedemptionRefusal: String, Sendable, Hashable {
        /// Past `expiresAt`.
        case expired
        /// Issued to another client (RFC 6749 §4.1.3).
        case otherClient
        /// `redirect_uri` not identical to the authorization request's (RFC 6749 §4.1.3).
        case redirectURIMismatch
        /// The code has a challenge and the request no verifier, or one of the wrong shape.
        case verifierMissing
        /// The verifier does not answer the challenge (RFC 7636 §4.6).
        case verifierMismatch
        /// A verifier for a code asked without a challenge: a PKCE downgrade (RFC 9700 §2.1.1).
        case verifierWithoutChallenge
    }

    /// Whether `client` may redeem this code at `now` with the token request's `redirect_uri` and
    /// `code_verifier`: nil when it may, else why not. Replay is the store's to tell
    /// (``OIDCWriter/consumeAuthorizationCode(hash:at:)``); this checks what the code is bound to.
    public func refusal(client clientID: String, redirectURI: String?, codeVerifier: String?, now: Int64) -> RedemptionRefusal? {
        guard now < expiresAt else { return .expired }
        guard clientID == self.clientID else { return .otherClient }
        guard redirectURI == self.redirectURI else { return .redirectURIMismatch }
        guard let codeChallenge else { return codeVerifier == nil ? nil : .verifierWithoutChallenge }
        guard let codeVerifier, Self.isVerifierShaped(codeVerifier) else { return .verifierMissing }
        return FlowContext.verifier(codeVerifier, answers: codeChallenge) ? nil : .verifierMismatch
    }

    /// RFC 7636 §4.1: 43 to 128 of `A-Z a-z 0-9 - . _ ~`.
    static func isVerifierShaped(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy {
                AppLinkCharacters.isLetter($0) || AppLinkCharacters.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "~")
            }
    }
}
