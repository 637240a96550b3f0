/// The parts of a validated action link, `{public-url}/action?mode=…&oobCode=…[&continueUrl=…][&lang=…]`.
///
/// `oobCode` is a secret: do not log or print it, and do not put it in an error.
public struct ActionLink: Sendable, Equatable {
    /// What the link does.
    public var mode: EmailAction
    /// The one-time code, exactly as it was in the link (percent-decoded once); not verified here.
    public var oobCode: String
    /// Where to send the user afterwards, decoded once; already checked against the allowed hosts.
    public var continueUrl: String?
    /// The language tag the mail was written in, when the link had a well-formed one.
    public var lang: String?

    /// Makes an action link from its parts.
    public init(mode: EmailAction, oobCode: String, continueUrl: String? = nil, lang: String? = nil) {
        self.mode = mode
        self.oobCode = oobCode
        self.continueUrl = continueUrl
        self.lang = lang
    }
}
