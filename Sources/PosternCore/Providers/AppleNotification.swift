import Foundation
import PosternCrypto

/// One of Sign in with Apple's server-to-server notifications, verified: Apple POSTs
/// `{"payload": "<JWS>"}` to the URL registered for the app when a person stops using Sign in
/// with Apple for it, deletes their Apple account, or turns mail forwarding to their private
/// relay address off or on.
public struct AppleNotification: Sendable, Hashable {
    /// What happened (the `events` claim's `type`).
    public enum Kind: Sendable, Hashable {
        /// `email-disabled`: mail to the private relay address is no longer forwarded.
        case emailDisabled
        /// `email-enabled`: mail to the private relay address is forwarded again.
        case emailEnabled
        /// `consent-revoked`: the person stopped using Sign in with Apple with the app.
        case consentRevoked
        /// `account-delete`: the person deleted their Apple account.
        case accountDelete
        /// A type Apple added later, as it was sent.
        case unknown(String)

        init(_ type: String) {
            switch type {
            case "email-disabled": self = .emailDisabled
            case "email-enabled": self = .emailEnabled
            case "consent-revoked": self = .consentRevoked
            case "account-delete": self = .accountDelete
            default: self = .unknown(type)
            }
        }
    }

    /// What happened.
    public let kind: Kind
    /// The `sub` of the person, as Apple's ID tokens carry it.
    public let subject: String
    /// `event_time` as Apple sends it (milliseconds since 1970).
    public let eventTime: Int64

    /// Creates the notification (the verifier does).
    public init(kind: Kind, subject: String, eventTime: Int64) {
        self.kind = kind
        self.subject = subject
        self.eventTime = eventTime
    }
}

/// Checks an Apple server-to-server notification's JWS against Apple's ID-token keys, already
/// fetched. Pure: no clock, no network.
enum AppleNotificationVerifier {
    /// The oldest `iat` accepted, in seconds before now: Apple sends a notification when the
    /// event happens, and an old one replayed should not end sessions again.
    static let maximumAge: Int64 = 3600

    /// Verifies `payload` (the JWS Apple POSTs as `payload`, or the whole `{"payload": …}` body)
    /// from `provider` (the `apple` entry) with `keys` at `now`.
    /// - Throws: `ProviderTokenRefusal`: `malformed` (not a JWS of RS256/ES256 with a `kid`, no
    ///   `jti`, `events` unreadable), `unknownKey`, `badSignature`, `wrongIssuer`, `wrongAudience`,
    ///   `expired` (`iat` older than an hour), `issuedInFuture`.
    static func verify(_ payload: String, keys: JSONWebKeySet, provider: IdentityProvider, now: Int64) throws(ProviderTokenRefusal)
        -> AppleNotification
    {
        guard let parsed = try? JSONWebToken.parse(jws(of: payload)) else { throw .malformed }
        guard let key = keys.key(id: parsed.keyID, algorithm: parsed.algorithm) else { throw .unknownKey }
        guard parsed.isSigned(by: key) else { throw .badSignature }
        guard let claims = try? JSONSerialization.jsonObject(with: parsed.claims) as? [String: Any],
            let issuer = claims["iss"] as? String, let audience = claims["aud"].flatMap(ProviderTokenVerifier.audienceList),
            let issuedAt = ProviderTokenVerifier.number(claims["iat"]), let id = claims["jti"] as? String, !id.isEmpty
        else { throw .malformed }
        guard provider.issuers.contains(issuer) else { throw .wrongIssuer }
        guard audience.contains(where: provider.audiences.contains) else { throw .wrongAudience }
        guard issuedAt >= now - maximumAge else { throw .expired }
        guard issuedAt <= now + ProviderTokenVerifier.skew else { throw .issuedInFuture }
        // `events` is a JSON string holding the event (Apple's documented form); an object is read too.
        let events: [String: Any]?
        if let text = claims["events"] as? String {
            events = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        } else {
            events = claims["events"] as? [String: Any]
        }
        guard let events, let type = events["type"] as? String, !type.isEmpty, let subject = events["sub"] as? String, !subject.isEmpty,
            let eventTime = ProviderTokenVerifier.number(events["event_time"])
        else { throw .malformed }
        return AppleNotification(kind: AppleNotification.Kind(type), subject: subject, eventTime: eventTime)
    }

    /// The JWS: `payload` itself, or the `payload` field of the JSON body Apple POSTs.
    static func jws(of payload: String) -> String {
        let trimmed = payload.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("{") else { return trimmed }
        let body = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any]
        return body?["payload"] as? String ?? ""
    }
}
