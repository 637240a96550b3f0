/// The limits of the contract's fields: the flows enforce them and the document states them, so
/// both read them here. Lengths of text count Unicode code points, as JSON Schema's
/// `minLength`/`maxLength` do.
public enum WireLimits {
    /// Longest address, in octets (RFC 5321 path limit less the angle brackets).
    public static let emailMaximumLength = 254
    /// Fewest code points of a new password.
    public static let passwordMinimumLength = 8
    /// Most code points of a new password.
    public static let passwordMaximumLength = 256
    /// Most code points of a display name (one line).
    public static let displayNameMaximumLength = 256
    /// Most code points of a challenge's solution (`challengeSolution`): an ALTCHA payload is about
    /// 250, a CAPTCHA token up to about 2,000.
    public static let challengeSolutionMaximumLength = 4096
    /// Most bytes of a user's `attributes`, as compact JSON.
    public static let attributesMaximumBytes = 4096
    /// Most characters of the device name an approval page shows.
    public static let deviceNameMaximumLength = 64
    /// Most bytes of an identity provider's ID token (Apple's and Google's are about 1 KiB).
    public static let providerTokenMaximumLength = 16_384
}
