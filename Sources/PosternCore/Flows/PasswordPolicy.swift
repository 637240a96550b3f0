import PosternAPI

/// The password rules (NIST SP 800-63B style): 8 to 256 characters (Unicode code points, as NIST
/// counts them and as the document's `minLength`/`maxLength` do), no composition rules, not the
/// address or its local part.
public enum PasswordPolicy {
    /// Which rule a password breaks: `details["rule"]` of the `WEAK_PASSWORD` error (the wire's
    /// `PasswordRule`).
    public typealias Rule = PasswordRule

    /// Fewest characters.
    public static let minimumLength = WireLimits.passwordMinimumLength
    /// Most characters.
    public static let maximumLength = WireLimits.passwordMaximumLength

    /// Checks `password` for the account at `email`.
    /// - Throws: `AuthError.weakPassword` saying which rule it breaks.
    public static func check(_ password: String, email: EmailAddress?) throws(AuthError) {
        let length = password.unicodeScalars.count
        guard length >= minimumLength else {
            throw .weakPassword("The password needs at least \(minimumLength) characters.", rule: .tooShort)
        }
        guard length <= maximumLength else {
            throw .weakPassword("The password may have at most \(maximumLength) characters.", rule: .tooLong)
        }
        if let email {
            let lowered = password.lowercased()
            if lowered == email.address.lowercased() || lowered == email.normalized || lowered == email.localPart.lowercased() {
                throw .weakPassword("The password must not be the email address or its part before the @.", rule: .isTheAddress)
            }
        }
    }
}
