/// Why a ``LinkPolicy`` could not be built from the service's settings.
///
/// The description names the setting, not its value.
public struct LinkPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case invalidPublicURL
        case invalidAllowedHost
    }

    private let reason: Reason

    private init(_ reason: Reason) {
        self.reason = reason
    }

    /// The public URL is not an absolute http(s) URL with a host (and no user-info).
    public static let invalidPublicURL = LinkPolicyError(.invalidPublicURL)
    /// An allowed host is empty or is not a bare `host` or `host:port`.
    public static let invalidAllowedHost = LinkPolicyError(.invalidAllowedHost)

    /// A stable UPPER_SNAKE_CASE identifier.
    public var code: String {
        switch reason {
        case .invalidPublicURL: "INVALID_PUBLIC_URL"
        case .invalidAllowedHost: "INVALID_ALLOWED_HOST"
        }
    }

    /// A sentence for the operator.
    public var description: String {
        switch reason {
        case .invalidPublicURL:
            "\(code): the public URL must be an absolute http or https URL with a host, such as https://auth.example.com"
        case .invalidAllowedHost:
            "\(code): each allowed continue host must be a host name, optionally with :port, such as app.example.com"
        }
    }
}
