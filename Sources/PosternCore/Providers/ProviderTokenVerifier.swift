import Foundation
import PosternCrypto

/// Who a provider's ID token says signed in: what the sign-in keeps of it.
public struct ProviderIdentity: Sendable, Hashable {
    /// The provider's `id` in `--identity-providers`.
    public let provider: String
    /// `sub`: the provider's stable identifier of the person (for Apple, per developer team).
    public let subject: String
    /// `email`, as the provider gave it; nil when the token has none.
    public let email: String?
    /// `email_verified`: true only when the provider says so (Apple sends the string `"true"`).
    public let emailVerified: Bool
    /// `exp`: until when the replay ledger must remember the token.
    public let expiresAt: Int64

    /// Creates the identity (the verifier does, and an import of linked identities will).
    public init(provider: String, subject: String, email: String?, emailVerified: Bool, expiresAt: Int64) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.expiresAt = expiresAt
    }
}

/// Why a provider's ID token was refused. The API answers all of them with `INVALID_PROVIDER_TOKEN`;
/// the case is for the log line and the tests. Carries no part of the token.
public enum ProviderTokenRefusal: Error, Sendable, Hashable {
    /// Not a compact JWS signed with RS256 or ES256 with a `kid` (`alg: none` and HS256 land
    /// here), or claims missing or of the wrong type.
    case malformed
    /// No key of the header's `kid` and algorithm in the provider's JWKS.
    case unknownKey
    /// The signature does not verify under that key.
    case badSignature
    /// `iss` is not the provider's.
    case wrongIssuer
    /// `aud` names none of the configured audiences.
    case wrongAudience
    /// `exp` has passed (beyond the allowed skew).
    case expired
    /// `iat` is in the future (beyond the allowed skew).
    case issuedInFuture
    /// The nonce does not match the one the caller sent, or only one side has one.
    case wrongNonce
}

/// Checks a provider's ID token as OpenID Connect Core §3.1.3.7 says, given keys already fetched.
/// Pure: no clock, no network.
public enum ProviderTokenVerifier {
    /// The clock difference allowed between the provider and this server, in seconds.
    public static let skew: Int64 = 60

    /// Verifies `token` from `provider` against its `keys` at `now`; `nonce` is what the caller
    /// sent (the raw nonce for Apple), nil when none.
    /// - Throws: `ProviderTokenRefusal`, the first check that failed, in the order of
    ///   docs/providers.md.
    public static func verify(
        _ token: String, keys: JSONWebKeySet, provider: IdentityProvider, now: Int64, nonce: String?
    ) throws(ProviderTokenRefusal) -> ProviderIdentity {
        guard let parsed = try? JSONWebToken.parse(token) else { throw .malformed }
        guard let key = keys.key(id: parsed.keyID, algorithm: parsed.algorithm) else { throw .unknownKey }
        guard parsed.isSigned(by: key) else { throw .badSignature }
        guard let claims = try? JSONSerialization.jsonObject(with: parsed.claims) as? [String: Any],
            let issuer = claims["iss"] as? String, let audience = claims["aud"],
            let expiresAt = number(claims["exp"]), let issuedAt = number(claims["iat"]),
            let subject = claims["sub"] as? String, !subject.isEmpty
        else { throw .malformed }
        guard provider.issuers.contains(issuer) else { throw .wrongIssuer }
        guard let audiences = audienceList(audience) else { throw .malformed }
        guard audiences.contains(where: provider.audiences.contains) else { throw .wrongAudience }
        // Several audiences: the party it was issued to (`azp`) must be one of ours (OpenID Connect
        // Core §3.1.3.7 points 4 and 5). With one audience `azp` may name another client of the
        // same project (Google's Android client presenting a token for the server's client id).
        if audiences.count > 1 {
            guard let presenter = claims["azp"] as? String, provider.audiences.contains(presenter) else { throw .wrongAudience }
        }
        guard expiresAt > now - skew else { throw .expired }
        guard issuedAt <= now + skew else { throw .issuedInFuture }
        let carried = claims["nonce"]
        switch (nonce, carried) {
        case (nil, nil): break
        case (let sent?, let carried as String):
            guard carried == expectedNonceClaim(sent, provider: provider) else { throw .wrongNonce }
        default: throw .wrongNonce
        }
        let email = (claims["email"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return ProviderIdentity(
            provider: provider.id, subject: subject, email: email, emailVerified: email != nil && flag(claims["email_verified"]),
            expiresAt: expiresAt)
    }

    /// What the token's `nonce` claim holds for the nonce the caller sent: for Apple the
    /// lower-case hex SHA-256 of the raw nonce (the app hands Apple the hash and sends us the raw
    /// value, so a token captured in transit cannot be paired with it), for the others the nonce itself.
    public static func expectedNonceClaim(_ nonce: String, provider: IdentityProvider) -> String {
        guard provider.kind == .apple else { return nonce }
        return Hex.lower(SHA256.hash(nonce))
    }

    /// An `aud` claim, a string or an array of strings, as a list; nil for anything else.
    static func audienceList(_ value: Any) -> [String]? {
        if let single = value as? String { return [single] }
        guard let list = value as? [Any], list.allSatisfy({ $0 is String }) else { return nil }
        return list.compactMap { $0 as? String }
    }

    /// A JSON number claim as whole seconds; nil for anything else (a boolean is not a time).
    static func number(_ value: Any?) -> Int64? {
        guard let value, !(value is Bool), let number = value as? NSNumber else { return nil }
        let seconds = number.doubleValue
        guard seconds.isFinite, seconds.rounded(.down) == seconds, abs(seconds) < 1e15 else { return nil }
        return Int64(seconds)
    }

    /// A boolean claim: JSON `true`, or the string `"true"` that Apple sends.
    private static func flag(_ value: Any?) -> Bool {
        if let text = value as? String { return text == "true" }
        return value as? Bool ?? false
    }
}
