/// Every hosted page (the action page's `/action`, the phone page's `/phone`, the OpenID Connect
/// provider's `/oidc/…`), with the template variables each may use.
///
/// The template of a kind is `templates/LOCALE/page-KIND.html`, put into the locale's layout
/// `page.html` at its `{{>content}}`. `en` must have the layout and every kind; another locale may
/// have any of them, the rest are `en`'s (its words still come from its own `page.strings`).
public enum PageKind: String, Sendable, Hashable, CaseIterable {
    /// A sign-in link opened in a browser: the continue button and the 6-digit code.
    case signIn = "sign-in"
    /// A reset link: the new-password form.
    case resetPassword = "reset-password"
    /// A verify, change or recover link: the sentence naming the address, the number to type and
    /// a confirm button.
    case confirm
    /// The form's action was applied.
    case done
    /// The link or the form cannot be used, and why.
    case error
    /// A sign-in link awaiting approval, first view: what it is and a button to review it (a
    /// GET shows nothing more: scanners follow links and run scripts).
    case approveReview = "approve-review"
    /// After the button: "Sign in DEVICE as a•••@example.org?" and the field for its number.
    case approveChoice = "approve-choice"
    /// The pick's outcome: approved for the device, or cancelled.
    case approveDone = "approve-done"
    /// The page a phone claim's SMS links to: the code field, a confirm and a refuse button.
    case phoneClaim = "phone-claim"
    /// The outcome of that page's form: proved, or refused (the claim deleted).
    case phoneDone = "phone-done"
    /// The OpenID Connect provider's sign-in page: the address that asks for a link, and (when
    /// the operator allows passwords) the password form and the "forgot your password" form. Its
    /// "forgot" answer and "signed out" are `done` pages, its refusals `error` pages.
    case oidcSignIn = "oidc-sign-in"
    /// "Check your mail" and the field for the mail's 6-digit code.
    case oidcCheckMail = "oidc-check-mail"
    /// The mail's link in the browser that started the sign-in: one button that completes it.
    case oidcContinue = "oidc-continue"
    /// What a client asks to see, allow or deny.
    case oidcConsent = "oidc-consent"
    /// "Sign out?" before a logout that came without a valid ID token hint.
    case oidcLogout = "oidc-logout"
    /// Approve on another device: the number to type there, and Continue here.
    case oidcApprove = "oidc-approve"

    /// The file name of the kind's template, e.g. `page-sign-in.html`.
    public var fileName: String { "page-\(rawValue).html" }

    /// The file name of the layout every page kind of a locale is put into.
    public static let layoutFileName = "page.html"

    /// The variables every kind has, and the only ones the layout may use.
    public static let layoutVariables: Set<PageVariable> = [.appName, .supportEmail, .supportLabel, .lang, .heading]

    /// The variables templates of this kind may use.
    public var variables: Set<PageVariable> { Self.layoutVariables.union(specificVariables) }

    private static let formVariables: Set<PageVariable> = [.formMode, .oobCode, .csrf, .submitLabel]
    private static let sentenceVariables: Set<PageVariable> = [.sentenceStart, .email, .sentenceEnd]

    private var specificVariables: Set<PageVariable> {
        switch self {
        case .signIn: [.message, .continueLink, .continueLabel, .codeLabel, .code]
        case .resetPassword: Self.formVariables.union([.passwordLabel, .passwordMinLength, .passwordMaxLength])
        case .confirm: Self.formVariables.union(Self.sentenceVariables).union([.confirmNumber, .confirmLabel, .message])
        case .done: Self.sentenceVariables.union([.backLink, .backLabel])
        case .error: [.message]
        case .approveReview: Self.formVariables.union([.message])
        case .approveChoice:
            Self.formVariables.union(Self.sentenceVariables)
                .union([.device, .deviceLabel, .pickLabel, .cancelLabel])
        case .approveDone: [.message, .device]
        case .phoneClaim: [.message, .claimID, .csrf, .codeLabel, .submitLabel, .cancelLabel]
        case .phoneDone: [.message]
        case .oidcSignIn:
            Self.oidcFormVariables.union([
                .message, .email, .emailLabel, .submitLabel, .passwordHeading, .passwordLabel, .passwordSubmitLabel, .forgotLabel,
                .forgotSubmitLabel, .approveLabel, .provider1, .provider1Label, .provider2, .provider2Label, .provider3,
                .provider3Label, .provider4, .provider4Label, .challengeScript, .challengeNoScript, .challengeField, .captchaClass,
                .captchaSiteKey,
            ])
        case .oidcCheckMail: Self.oidcFormVariables.union(Self.sentenceVariables).union([.message, .codeLabel, .submitLabel, .restartLabel])
        case .oidcContinue: Self.oidcFormVariables.union([.message, .oobCode, .submitLabel])
        case .oidcConsent:
            Self.oidcFormVariables.union(Self.sentenceVariables).union(Self.scopeVariables).union([.message, .submitLabel, .cancelLabel])
        case .oidcLogout: Self.oidcFormVariables.union([.message, .submitLabel])
        case .oidcApprove:
            Self.oidcFormVariables.union(Self.sentenceVariables)
                .union([.message, .approvalStart, .approvalNumber, .approvalEnd, .submitLabel, .restartLabel])
        }
    }

    private static let oidcFormVariables: Set<PageVariable> = [.request, .csrf]
    private static let scopeVariables: Set<PageVariable> = [.scopeOpenID, .scopeEmail, .scopeProfile, .scopeOfflineAccess]

    /// The variables the kind's template must use, or the page cannot do its job: a form without
    /// its code, token or language (the answer to the form would be in English), a sign-in page
    /// without the code for another device.
    public var requiredVariables: Set<PageVariable> {
        switch self {
        case .signIn: [.continueLink, .code]
        case .resetPassword: [.oobCode, .csrf, .lang]
        // The number to type, or a scanner that submits the form changes the account.
        case .confirm: [.oobCode, .csrf, .lang, .confirmNumber]
        case .done: [.sentenceStart]
        case .error: [.message]
        case .approveReview: [.oobCode, .csrf, .lang]
        // The device, or the owner cannot tell whose number to type. (The page asks for the
        // number, an input named `pick`; it offers none: a number to tap was a guess that won one
        // time in three.)
        case .approveChoice: [.oobCode, .csrf, .lang, .device]
        case .approveDone: [.message]
        case .phoneClaim: [.claimID, .csrf, .lang]
        case .phoneDone: [.message]
        case .oidcSignIn, .oidcLogout: [.request, .csrf, .lang]
        // The address goes back with the code: the code is checked against it.
        case .oidcCheckMail: [.request, .csrf, .lang, .email]
        case .oidcContinue: [.request, .csrf, .lang, .oobCode]
        // Every scope, or a template could leave out what the person is asked to allow.
        case .oidcConsent: Self.scopeVariables.union([.request, .csrf, .lang])
        // The number to type on the other device, and the address and number going back with
        // Continue: the approval is looked up by the address, the page shown again with the number.
        case .oidcApprove: [.request, .csrf, .lang, .email, .approvalNumber]
        }
    }
}
