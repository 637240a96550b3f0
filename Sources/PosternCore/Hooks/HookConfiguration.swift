/// The hooks that decide (`--hook-before-sign-up`, `--hook-before-sign-in`, `--hook-token-claims`):
/// where each is POSTed, the secrets that sign the POSTs, the deadline and what a failure means.
public struct HookConfiguration: Sendable {
    /// What a hook that did not answer usably (`--hook-failure`) comes to.
    public enum FailureMode: String, Sendable, CaseIterable {
        /// The sign-in or sign-up is refused (503 `HOOK_FAILED`).
        case closed
        /// It goes on as if the hook allowed it, with no claims added.
        case open
    }

    /// The URL of each hook that is on.
    public var urls: [HookKind: String] = [:]
    /// The `whsec_…` secrets every hook call is signed with (`--hook-secret-file`, read at start).
    public var secrets: [WebhookSecret] = []
    /// Milliseconds one call may take, connecting included (`--hook-timeout`).
    public var timeoutMilliseconds: Int64 = HookConfiguration.defaultTimeoutMilliseconds
    /// `--hook-failure`.
    public var failure: FailureMode = .closed

    /// `--hook-timeout`'s default.
    public static let defaultTimeoutMilliseconds: Int64 = 2000
    /// `--hook-timeout`'s bounds: a hook is in the sign-in's path, a person waits on it.
    public static let timeoutRange: ClosedRange<Int64> = 100...10_000

    public init() {}

    /// Whether any hook is on.
    public var isOn: Bool { !urls.isEmpty }

    /// Checks a hook's URL: https, or http to a loopback host only (the hook's answer decides who
    /// signs in; anything between must not be able to change it); the rest as a webhook URL's.
    /// - Throws: `SettingsError` saying what is wrong.
    public static func checkURL(_ url: String) throws(SettingsError) {
        try WebhookConfiguration.checkURL(url)
        guard !url.lowercased().hasPrefix("https://") else { return }
        let authority = ProviderURL.authority(of: url).lowercased()
        let loopbackName = authority == "localhost" || authority.hasPrefix("localhost:")
        let loopbackAddress = TargetAddressPolicy.literalHost(ofURL: url).map { TargetAddressPolicy().refusal(of: $0) == "a loopback" } ?? false
        guard loopbackName || loopbackAddress else {
            throw SettingsError("a hook URL must be https://, or http:// to a loopback host (127.0.0.1, [::1], localhost)")
        }
    }
}

/// The three hooks, as the `type` of their request names them.
public enum HookKind: String, Sendable, Hashable, CaseIterable {
    /// Before an account is created by a proved address, number or identity.
    case beforeSignUp = "before_sign_up"
    /// Before an existing account is given a session.
    case beforeSignIn = "before_sign_in"
    /// For the extra claims of a token being issued.
    case tokenClaims = "token_claims"

    /// The setting that turns it on.
    public var flag: String {
        switch self {
        case .beforeSignUp: "hook-before-sign-up"
        case .beforeSignIn: "hook-before-sign-in"
        case .tokenClaims: "hook-token-claims"
        }
    }
}
