/// The variables of the SMS templates (`templates/LOCALE/sms-*.txt`).
public enum SMSVariable: Int, TemplateVariable {
    /// The product name (`--app-name`).
    case appName
    /// The 6-digit code.
    case code
    /// Minutes until the code expires.
    case expiresInMinutes
    /// The page the message links to (a claim code's hosted page, where the number's holder
    /// proves or refuses the claim), when it has one.
    case link
    /// The account that asks for the number, masked ("a***@example.com"), when it has an address.
    case account
    /// Present ("yes") when the account that asks has no address.
    case accountWithoutAddress

    /// The name used in template source.
    public var name: String {
        switch self {
        case .appName: "appName"
        case .code: "code"
        case .expiresInMinutes: "expiresInMinutes"
        case .link: "link"
        case .account: "account"
        case .accountWithoutAddress: "accountWithoutAddress"
        }
    }
}

extension SMSMessageKind {
    /// The file of this kind in a locale folder: `sms-claim-code.txt`.
    public var fileName: String { "\(templateName).txt" }

    /// Every variable a template of this kind may use.
    static var variables: Set<SMSVariable> { Set(SMSVariable.allCases) }
    /// The text used when `templates/en` has no file of this kind: the bundled `en` file's.
    public var builtInSource: String {
        switch self {
        case .claimCode:
            "{{code}} is your {{appName}} code to confirm this phone number{{#account}} for the account {{account}}{{/account}}"
                + "{{#accountWithoutAddress}} for an account without an email address{{/accountWithoutAddress}}.{{#link}} Not yours? {{link}}{{/link}}\n"
        case .signInCode: "{{code}} is your {{appName}} sign-in code. Do not share it.\n"
        case .test: "{{appName}} test SMS: delivery works. Example code {{code}}.\n"
        case .transferAwaitingRelease:
            "{{appName}}: {{#account}}the account {{account}}{{/account}}{{^account}}an account without an email address{{/account}}"
                + " asks for this phone number, your way to sign in. It moves only if you release it in your account.\n"
        }
    }

    /// What a template of this kind must use: the code (the test message's is an example); a
    /// notice, which has none, the account that asks.
    var requiredVariables: Set<SMSVariable> { carriesCode ? [.code] : [.account] }
}
