/// The challenge a hosted page puts before its forms that send mail (issue 47, ``ChallengeGate``):
/// the built-in proof of work, solved in the browser by Postern's own script, or a CAPTCHA
/// service's widget. The page sends the solution back in the form: `challengeSolution` (or the
/// ALTCHA widget's `altcha`, or the service's ``CaptchaService/formField``).
public enum PageChallenge: Sendable, Hashable {
    /// The proof of work: ``proofOfWorkScript`` fetches `GET /v1/challenge`, solves it and puts
    /// the ALTCHA payload into each form's hidden ``proofOfWorkField`` before the form is sent.
    case proofOfWork
    /// The service's widget (an element of its ``CaptchaService/widgetClass`` with the public
    /// `siteKey`) and its script, which fills the service's field in the form.
    case captcha(CaptchaService, siteKey: String)

    /// What the gate of `configuration` asks a page to show: nil when the challenge is off, a
    /// CAPTCHA when one is configured with its site key, else the proof of work.
    public init?(_ configuration: ChallengeConfiguration) {
        guard configuration.mode != .off else { return nil }
        if let service = configuration.captcha, let siteKey = configuration.captchaSiteKey {
            self = .captcha(service, siteKey: siteKey)
        } else {
            self = .proofOfWork
        }
    }

    /// Where Postern serves the proof of work's script (a static file, like the style sheet: the
    /// pages allow no inline script).
    public static let proofOfWorkScript = "/challenge.js"

    /// The hidden form field the proof of work's script fills, the same name the API's JSON
    /// bodies take the solution in.
    public static let proofOfWorkField = "challengeSolution"

    /// The script the page loads: Postern's own, or the service's documented one.
    public var scriptURL: String {
        switch self {
        case .proofOfWork: Self.proofOfWorkScript
        case .captcha(let service, _): service.scriptURL
        }
    }
}
