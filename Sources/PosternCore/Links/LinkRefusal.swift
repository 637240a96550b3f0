/// Why a pasted text could not be turned into an action: a stable machine `code` and a sentence
/// a person can act on.
///
/// Built like hummingbird's errors, a struct over a private enum, so reasons can be added without
/// breaking callers that compare against the static members or read `code`. Neither `message` nor
/// `description` ever contains the pasted text, a link, a host from it or its code: the code is a
/// secret and the rest may be personal data.
public struct LinkRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case tooLarge
        case notAnActionLink
        case foreignHost
        case deceptiveLink
        case insecure
        case unsafeScheme
        case missingCode
        case malformedCode
        case unknownMode
        case ambiguous
        case gatewayOffline
        case damagedWrapper
        case tooDeep
        case continueURLNotAllowed
    }

    private let reason: Reason

    private init(_ reason: Reason) {
        self.reason = reason
    }

    /// The text is longer than ``PastedLinkParser/maximumInputBytes``.
    public static let tooLarge = LinkRefusal(.tooLarge)
    /// Nothing in the text is an action link, an oobCode or a 6-digit code.
    public static let notAnActionLink = LinkRefusal(.notAnActionLink)
    /// The action link points at a host that is neither the public URL's nor an allowed app host.
    public static let foreignHost = LinkRefusal(.foreignHost)
    /// The link hides its real host behind a user-info part (`name@`) or a backslash.
    public static let deceptiveLink = LinkRefusal(.deceptiveLink)
    /// The link uses plain http where the service is reached over https.
    public static let insecure = LinkRefusal(.insecure)
    /// The link is a `javascript:` (or other non-web) URL.
    public static let unsafeScheme = LinkRefusal(.unsafeScheme)
    /// The action link has no `oobCode`, or an empty one: it was cut off.
    public static let missingCode = LinkRefusal(.missingCode)
    /// The `oobCode` holds characters no code has (spaces, controls, non-ASCII): it was damaged.
    public static let malformedCode = LinkRefusal(.malformedCode)
    /// The `mode` is missing or not one of ``EmailAction``.
    public static let unknownMode = LinkRefusal(.unknownMode)
    /// The text holds two different action links (or one link with two different codes).
    public static let ambiguous = LinkRefusal(.ambiguous)
    /// A gateway (Mimecast) rewrote the link into a token that only its servers can resolve.
    public static let gatewayOffline = LinkRefusal(.gatewayOffline)
    /// A mail gateway's rewrite is recognised but broken, so the original link cannot be recovered.
    public static let damagedWrapper = LinkRefusal(.damagedWrapper)
    /// The link is wrapped by more than ``PastedLinkParser/maximumWrapperDepth`` gateways.
    public static let tooDeep = LinkRefusal(.tooDeep)
    /// The `continueUrl` is not an absolute http(s) URL on an allowed host.
    public static let continueURLNotAllowed = LinkRefusal(.continueURLNotAllowed)

    /// A stable UPPER_SNAKE_CASE identifier for programs and API answers.
    public var code: String {
        switch reason {
        case .tooLarge: "TOO_LARGE"
        case .notAnActionLink: "NOT_AN_ACTION_LINK"
        case .foreignHost: "FOREIGN_HOST"
        case .deceptiveLink: "DECEPTIVE_LINK"
        case .insecure: "INSECURE"
        case .unsafeScheme: "UNSAFE_SCHEME"
        case .missingCode: "MISSING_CODE"
        case .malformedCode: "MALFORMED_CODE"
        case .unknownMode: "UNKNOWN_MODE"
        case .ambiguous: "AMBIGUOUS"
        case .gatewayOffline: "GATEWAY_OFFLINE"
        case .damagedWrapper: "DAMAGED_WRAPPER"
        case .tooDeep: "TOO_DEEP"
        case .continueURLNotAllowed: "CONTINUE_URL_NOT_ALLOWED"
        }
    }

    /// A sentence for the person who pasted the text, saying what is wrong and what to do.
    public var message: String {
        switch reason {
        case .tooLarge:
            "the pasted text is too long (more than 1 MiB): paste only the link from the mail"
        case .notAnActionLink:
            "this is not a sign-in link: paste the link from the mail, or type the 6-digit code"
        case .foreignHost:
            "this link is for another site: it was not sent by this service"
        case .deceptiveLink:
            "this link hides the site it really opens: it was not sent by this service"
        case .insecure:
            "this link uses plain http instead of https: paste the link exactly as it is in the mail"
        case .unsafeScheme:
            "this is not a sign-in link: it would run a script instead of opening a page"
        case .missingCode:
            "the link is cut off: it has no code. Copy the whole link from the mail, or type the 6-digit code"
        case .malformedCode:
            "the link is damaged: its code holds characters a code never has. Copy the whole link again"
        case .unknownMode:
            "this is not a sign-in link: it does not say which action to take, or names one this service does not do"
        case .ambiguous:
            "two different links: paste one of them"
        case .gatewayOffline:
            "this link was rewritten by Mimecast and cannot be opened offline: type the 6-digit code from the mail instead"
        case .damagedWrapper:
            "this link was rewritten by a mail filter and the rewrite is damaged: copy the link again, or type the 6-digit code"
        case .tooDeep:
            "this link was rewritten by too many mail filters (more than 5): type the 6-digit code from the mail instead"
        case .continueURLNotAllowed:
            "this link would send you on to a site this service does not allow: it was not sent by this service"
        }
    }

    /// `CODE: message`, safe to log: it never holds the pasted text or a code.
    public var description: String {
        "\(code): \(message)"
    }
}
