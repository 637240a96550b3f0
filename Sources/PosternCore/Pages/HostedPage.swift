/// What one hosted page shows: its kind and the values it cannot do without. The words are the
/// renderer's to add, in the page's language.
public enum HostedPage: Sendable, Hashable {
    /// A sign-in link: the button to the app (`continueLink`, nil without a `continueUrl`) and
    /// the 6-digit code (nil for a PKCE link, which only its verifier or the typed code completes).
    case signIn(continueLink: String?, code: String?)
    /// A reset link: the new-password form.
    case resetPassword(PageForm)
    /// A verify, change or recover link (`action`): the sentence naming `email` and a confirm form
    /// that goes only with `number` typed into it (`retry`: the last try had another number).
    case confirm(EmailAction, email: String, form: PageForm, number: String, retry: Bool = false)
    /// `action` was applied to the account at `email`; `backLink` is the link's `continueUrl`.
    case done(EmailAction, email: String, backLink: String?)
    /// A used sign-in link opened again in the browser that completed it: "you are already
    /// signed in" (a page, not an error), with the template of `done`.
    case signedIn(backLink: String?)
    /// Why the link or the form cannot be used.
    case error(PageError)
    /// A sign-in link awaiting approval: the button that reviews it.
    case approveReview(PageForm)
    /// The question for `device`, signing in as `maskedEmail`, and the field for its number.
    case approveChoice(device: String, maskedEmail: String, form: PageForm)
    /// The number approved the sign-in on `device`, or (nil) cancelled the request.
    case approveDone(device: String?)
    /// The page a phone claim's SMS links to: the code field for `claimID`, with the form's token.
    case phoneClaim(claimID: String, csrf: String)
    /// The phone page's form proved the number (`refused` false) or deleted the claim (true).
    case phoneDone(refused: Bool)
    /// The OpenID Connect provider's sign-in page for `clientName`: the address field (prefilled
    /// with `loginHint`) that asks for a link, and when `passwords` the password form and the
    /// "forgot your password" form; `retry` says why the last try failed; `challenge`: what the
    /// forms that send mail (the address and "forgot") must solve first, if anything.
    case oidcSignIn(
        OIDCPageForm, clientName: String, loginHint: String?, passwords: Bool, retry: OIDCSignInRetry? = nil,
        providers: [OIDCProviderButton] = [], challenge: PageChallenge? = nil)
    /// After the address: "check your mail", in the same words for every address (never whether
    /// it has an account), and the field for the mail's 6-digit code (`retry`: the last one was wrong).
    case oidcCheckMail(OIDCPageForm, email: String, retry: Bool = false)
    /// After "approve on my other device": the same words for every address (`email`, prefilled
    /// again with Continue), the `number` to type on the other device's page, and Continue
    /// (`waiting`: it was pressed before the number was typed there).
    case oidcApprove(OIDCPageForm, email: String, number: Int, waiting: Bool = false)
    /// After "forgot your password": the same words for every address.
    case oidcForgotSent(email: String)
    /// The mail's link opened in the browser that started the sign-in: one button that POSTs the
    /// link's `oobCode` (a GET consumes nothing).
    case oidcContinue(OIDCPageForm, oobCode: String, clientName: String)
    /// What `clientName` asks to see (`scopes`) for the account `email`: allow or deny.
    case oidcConsent(OIDCPageForm, clientName: String, scopes: [String], email: String)
    /// "Sign out (of `clientName`)?" with a button: a logout without a valid ID token hint asks
    /// first. The form's `request` is the logout's state token.
    case oidcLogoutConfirm(OIDCPageForm, clientName: String?)
    /// The browser session has ended.
    case oidcSignedOut
    /// Why the provider shows an error on its own page instead of redirecting to the client.
    case oidcRefused(OIDCPageRefusal)

    /// The kind, which picks the template.
    public var kind: PageKind {
        switch self {
        case .signIn: .signIn
        case .resetPassword: .resetPassword
        case .confirm: .confirm
        case .done, .signedIn, .oidcForgotSent, .oidcSignedOut: .done
        case .error, .oidcRefused: .error
        case .approveReview: .approveReview
        case .approveChoice: .approveChoice
        case .approveDone: .approveDone
        case .phoneClaim: .phoneClaim
        case .phoneDone: .phoneDone
        case .oidcSignIn: .oidcSignIn
        case .oidcCheckMail: .oidcCheckMail
        case .oidcContinue: .oidcContinue
        case .oidcConsent: .oidcConsent
        case .oidcLogoutConfirm: .oidcLogout
        case .oidcApprove: .oidcApprove
        }
    }
}

/// The hidden fields of a page's form: the link's code and the CSRF token bound to it.
public struct PageForm: Sendable, Hashable {
    /// The link's code (`oobCode`).
    public var oobCode: String
    /// The CSRF token for this browser and code.
    public var csrf: String

    /// A form for `oobCode` with the token `csrf`.
    public init(oobCode: String, csrf: String) {
        self.oobCode = oobCode
        self.csrf = csrf
    }
}

/// Why a page cannot do what the link asks, in words the page has in every language: never the
/// API's English message.
public enum PageError: Sendable, Hashable {
    /// The link has expired.
    case expired
    /// The link is malformed, unknown, for another action, or the account changed.
    case invalid
    /// The (genuine) link was already used.
    case used
    /// The (genuine) link was ended by the use of a newer one for the same address.
    case superseded
    /// The (genuine) link is bound to the browser that asked for it, and this is another.
    case otherBrowser
    /// The form's token does not match this browser and link.
    case form
    /// The new password breaks a rule.
    case weakPassword(PasswordPolicy.Rule)
    /// The new address already belongs to another account.
    case addressTaken
    /// Too many tries from here; try later.
    case tooManyAttempts
    /// The service cannot do it just now.
    case unavailable

    /// The page error that says `error`: matched against the catalogue's own errors, never
    /// against hand-typed codes.
    public init(_ error: AuthError) {
        if error.code == AuthError.code(.expired).code {
            self = .expired
        } else if error.code == AuthError.code(.alreadyUsed).code {
            self = .used
        } else if error.code == AuthError.code(.superseded).code {
            self = .superseded
        } else if error.code == AuthError.code(.otherBrowser).code {
            self = .otherBrowser
        } else if error.code == AuthError.weakPassword("", rule: .tooShort).code,
            let rule = error.details["rule"].flatMap(PasswordPolicy.Rule.init(rawValue:))
        {
            self = .weakPassword(rule)
        } else if error.code == AuthError.emailExists.code {
            self = .addressTaken
        } else if error.kind == .rateLimited {
            self = .tooManyAttempts
        } else if error.isServerFault {
            self = .unavailable
        } else {
            self = .invalid
        }
    }
}

/// A rendered page: the HTML, and the language it is in.
public struct RenderedPage: Sendable, Hashable {
    /// The locale whose words (and templates) were used, e.g. `de`.
    public let locale: String
    /// The whole HTML document.
    public let html: String
}

/// A "Continue with …" button of the hosted sign-in page: an identity provider with a web flow.
public struct OIDCProviderButton: Sendable, Hashable {
    /// The provider's `id` (the form's value).
    public let id: String
    /// Its name on the button: Apple, Google, or the `id` of another provider.
    public let name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    /// The buttons of `providers`, at most ``maximum`` (the template's slots), in the file's order.
    public static func of(_ providers: [IdentityProvider]) -> [OIDCProviderButton] {
        providers.prefix(maximum).map { provider in
            switch provider.kind {
            case .apple: OIDCProviderButton(id: provider.id, name: "Apple")
            case .google: OIDCProviderButton(id: provider.id, name: "Google")
            case .openID: OIDCProviderButton(id: provider.id, name: provider.id)
            }
        }
    }

    /// How many the sign-in page shows.
    public static let maximum = 4
}
