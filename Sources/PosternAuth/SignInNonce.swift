import Foundation

/// The nonce of a Sign in with Apple request: `hashed` (the lower-case hex SHA-256 of `raw`)
/// goes into `ASAuthorizationAppleIDRequest.nonce` and comes back inside the ID token; `raw`
/// goes to the server with the token (`.apple(idToken:rawNonce:fullName:)`), which hashes it
/// and compares. A token captured elsewhere then cannot be replayed from another request.
public struct SignInNonce: Sendable, Hashable {
    /// What the app keeps and sends with the token: 32 random bytes, base64url.
    public let raw: String
    /// The lower-case hex SHA-256 of `raw`, for the provider's request.
    public let hashed: String

    /// A new random nonce; nil where this platform offers no SHA-256.
    public static func make() -> SignInNonce? {
        var generator = SystemRandomNumberGenerator()
        return SignInNonce(raw: PKCE.base64URL((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }))
    }

    /// The nonce `raw` with its hash; nil where this platform offers no SHA-256.
    public init?(raw: String) {
        guard let digest = SHA256Digest.of(Array(raw.utf8)) else { return nil }
        self.raw = raw
        hashed = digest.map { String(format: "%02x", $0) }.joined()
    }
}
