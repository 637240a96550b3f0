/// What kind of SMS a message is: picks its template (`sms-claim-code`, `sms-sign-in-code`,
/// `sms-transfer-awaiting-release`, `sms-test`).
public enum SMSMessageKind: String, Sendable, Hashable, CaseIterable {
    /// The code that proves a number for a claim.
    case claimCode
    /// A sign-in code.
    case signInCode
    /// A notice to the holder of a number that is its account's only way in: another account
    /// asks for it, and it moves only if the holder releases it. No code.
    case transferAwaitingRelease
    /// An operator's test message.
    case test

    /// The template's name in `templates/LOCALE/` (without `.txt`).
    public var templateName: String {
        switch self {
        case .claimCode: "sms-claim-code"
        case .signInCode: "sms-sign-in-code"
        case .transferAwaitingRelease: "sms-transfer-awaiting-release"
        case .test: "sms-test"
        }
    }

    /// Whether the message carries a code (then it ends with the origin-bound line `@host #code`).
    public var carriesCode: Bool { self != .transferAwaitingRelease }
}

/// What one SMS says, decided at delivery time: its kind, its 6-digit code, and the locales to
/// try, best first (nil entries skipped; `en` is the last resort).
public struct SMSContent: Sendable, Hashable {
    public var kind: SMSMessageKind
    /// The 6-digit code (the test message's is a fixed example; empty for a notice).
    public var code: String
    public var localePreferences: [String?]
    /// The page the message links to, if any: a claim code's hosted page, where a holder who is
    /// not the account's owner proves (or refuses) the claim (`{public-url}/phone?claim=ID`).
    public var link: String?
    /// The account that asks for the number, masked as mail masks addresses ("a***@example.com"):
    /// on an owner's claim code and on a transfer notice, so the holder knows who asks before
    /// typing a code or releasing a number. Never on a holder's own claim (it would say whether the
    /// address it named has an account).
    public var account: String?
    /// The account that asks has no address to name.
    public var accountWithoutAddress: Bool

    public init(
        kind: SMSMessageKind, code: String, localePreferences: [String?] = [], link: String? = nil, account: String? = nil,
        accountWithoutAddress: Bool = false
    ) {
        self.kind = kind
        self.code = code
        self.localePreferences = localePreferences
        self.link = link
        self.account = account
        self.accountWithoutAddress = accountWithoutAddress
    }
}

/// The content stage of SMS delivery, as ``MailComposer`` is for mail: the worker asks it what a
/// claimed message says. The runtime injects one.
public protocol SMSComposing: Sendable {
    /// What `intent` to `recipient` says now; nil when there is nothing to send any more (the claim
    /// is gone or expired, the request was used): the message is then finished unsent.
    /// - Throws: `AuthError` when the store fails (the message is retried).
    func composeSMS(_ intent: SMSIntent, recipient: PhoneNumber) throws(AuthError) -> SMSContent?
}
