/// The variables of the hosted page's templates (`templates/LOCALE/page*.html`); which of them a
/// template may use is its kind's to say (``PageKind/variables``). The words among them come from
/// `page.strings` in the page's language; the page fills in the rest.
public enum PageVariable: Int, TemplateVariable {
    /// The product name (`--app-name`).
    case appName
    /// The support address (`--support-email`), when configured.
    case supportEmail
    /// The words before the support address ("Questions? Write to").
    case supportLabel
    /// The language the page is in, e.g. `de`: for `<html lang>` and the form's hidden field.
    case lang
    /// The page's heading (also in its title).
    case heading
    /// A sentence that names no address: the error, or the sign-in page's hint.
    case message
    /// The words of a sentence before the address it names (all of it when it names none).
    case sentenceStart
    /// The address a sentence names, when it names one.
    case email
    /// The words of a sentence after the address.
    case sentenceEnd
    /// The continue button's target: the app's `continueUrl` carrying the code.
    case continueLink
    /// The continue button's words.
    case continueLabel
    /// The words before the 6-digit code.
    case codeLabel
    /// The 6-digit code for typing on another device (absent for PKCE links).
    case code
    /// The form's `mode` field.
    case formMode
    /// The form's `oobCode` field: the link's code.
    case oobCode
    /// The form's CSRF token.
    case csrf
    /// The form's button words.
    case submitLabel
    /// The new password field's label.
    case passwordLabel
    /// The fewest characters a password may have.
    case passwordMinLength
    /// The most characters a password may have.
    case passwordMaxLength
    /// Where the done page's button goes back to: the link's `continueUrl`.
    case backLink
    /// The back button's words.
    case backLabel
    /// The device a sign-in waits for approval on ("Chrome on Linux").
    case device
    /// The words before the device's name.
    case deviceLabel
    /// "Type the number shown on that device".
    case pickLabel
    /// The button that cancels the request ("I did not ask for this").
    case cancelLabel
    /// The phone claim a phone page's form is for.
    case claimID
    /// The number a confirm page asks the person to type (a scanner submits forms, it does not
    /// type what a page says).
    case confirmNumber
    /// The words before that number ("To confirm, type this number:").
    case confirmLabel
    /// An OIDC page form's `request` field: the pending authorization request.
    case request
    /// The address field's label.
    case emailLabel
    /// The words above the password form; the sign-in page shows that form only when present.
    case passwordHeading
    /// The password form's button words.
    case passwordSubmitLabel
    /// "Forgot your password?"
    case forgotLabel
    /// The button of the "forgot your password" form.
    case forgotSubmitLabel
    /// The button that starts over with another address.
    case restartLabel
    /// What the `openid` scope lets a client do, when it asks for it.
    case scopeOpenID
    /// What the `email` scope lets a client do, when it asks for it.
    case scopeEmail
    /// What the `profile` scope lets a client do, when it asks for it.
    case scopeProfile
    /// What the `offline_access` scope lets a client do, when it asks for it.
    case scopeOfflineAccess
    /// The sign-in page's second button on the address form: approve on another device.
    case approveLabel
    /// The number to type on the other device's page (an approval's 2 digits).
    case approvalNumber
    /// The words of the approve page's instruction before that number.
    case approvalStart
    /// The words of that instruction after the number.
    case approvalEnd
    /// The sign-in page's identity provider buttons (at most four: docs/providers.md): each
    /// provider's `id` (the button's value) and its words ("Continue with Google").
    case provider1, provider1Label, provider2, provider2Label, provider3, provider3Label, provider4, provider4Label
    /// The sign-in page's challenge (``PageChallenge``), present only when one is asked for: the
    /// script to load (Postern's proof of work, or the CAPTCHA service's).
    case challengeScript
    /// The words shown to a browser without JavaScript when a challenge is asked for.
    case challengeNoScript
    /// The proof of work's hidden field in each form that sends mail (`challengeSolution`),
    /// present only for the proof of work.
    case challengeField
    /// The CAPTCHA widget's element class (`cf-turnstile`, `h-captcha`, `g-recaptcha`), present
    /// only for a CAPTCHA.
    case captchaClass
    /// The CAPTCHA's public site key, for the widget's `data-sitekey`.
    case captchaSiteKey

    /// The name used in template source, e.g. `continueLink`.
    public var name: String {
        switch self {
        case .appName: "appName"
        case .supportEmail: "supportEmail"
        case .supportLabel: "supportLabel"
        case .lang: "lang"
        case .heading: "heading"
        case .message: "message"
        case .sentenceStart: "sentenceStart"
        case .email: "email"
        case .sentenceEnd: "sentenceEnd"
        case .continueLink: "continueLink"
        case .continueLabel: "continueLabel"
        case .codeLabel: "codeLabel"
        case .code: "code"
        case .formMode: "formMode"
        case .oobCode: "oobCode"
        case .csrf: "csrf"
        case .submitLabel: "submitLabel"
        case .passwordLabel: "passwordLabel"
        case .passwordMinLength: "passwordMinLength"
        case .passwordMaxLength: "passwordMaxLength"
        case .backLink: "backLink"
        case .backLabel: "backLabel"
        case .claimID: "claimId"
        case .device: "device"
        case .deviceLabel: "deviceLabel"
        case .pickLabel: "pickLabel"
        case .cancelLabel: "cancelLabel"
        case .confirmNumber: "confirmNumber"
        case .confirmLabel: "confirmLabel"
        case .request: "request"
        case .emailLabel: "emailLabel"
        case .passwordHeading: "passwordHeading"
        case .passwordSubmitLabel: "passwordSubmitLabel"
        case .forgotLabel: "forgotLabel"
        case .forgotSubmitLabel: "forgotSubmitLabel"
        case .restartLabel: "restartLabel"
        case .scopeOpenID: "scopeOpenid"
        case .scopeEmail: "scopeEmail"
        case .scopeProfile: "scopeProfile"
        case .scopeOfflineAccess: "scopeOfflineAccess"
        case .approveLabel: "approveLabel"
        case .approvalNumber: "approvalNumber"
        case .approvalStart: "approvalStart"
        case .approvalEnd: "approvalEnd"
        case .provider1: "provider1"
        case .provider1Label: "provider1Label"
        case .provider2: "provider2"
        case .provider2Label: "provider2Label"
        case .provider3: "provider3"
        case .provider3Label: "provider3Label"
        case .provider4: "provider4"
        case .provider4Label: "provider4Label"
        case .challengeScript: "challengeScript"
        case .challengeNoScript: "challengeNoScript"
        case .challengeField: "challengeField"
        case .captchaClass: "captchaClass"
        case .captchaSiteKey: "captchaSiteKey"
        }
    }
}
