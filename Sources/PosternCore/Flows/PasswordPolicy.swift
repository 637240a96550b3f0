/// The password rules (NIST SP 800-63B style): 8 to 256 characters, no composition rules, not
/// the address or its local part.
public enum PasswordPolicy {
    /// Which rule a password breaks: `details["rule"]` of the `WEAK_PASSWORD` error, so a page in
    /// another language can say it in its own words.
    public enum Rule: String, Sendable, CaseIterable {
        case tooShort
        case tooLong
        case isTheAddress
    }

    /// Fewest characters.
    public static let minimumLength = 8
    /// Most characters.
    public static let maximumLength = 256

    /// Checks `password` for the account at `email`.
    /// - Throws: `AuthError.weakPassword` saying which rule it breaks.
    public static func check(_ password: String, email: EmailAddress?) throws(AuthError) {
        let length = password.count
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
