/// Where a genuine sign-in link stands for the browser (or device) presenting it: whether the
/// link is bound to a browser or device, whether this is the one, and whether the link was used.
/// The hosted page says "already signed in" for a used link in the browser that completed it, and
/// "open it in the browser you asked from" for a bound link in another.
public struct BrowserCheck: Sendable, Hashable {
    /// The link's binding as seen from the presenting browser.
    public enum Binding: Sendable, Hashable {
        /// Asked without a binding (no `codeChallenge`, no `bindBrowser`).
        case unbound
        /// Bound, and the presented cookie or verifier is the one it is bound to.
        case sameBrowser
        /// Bound, and no cookie or verifier was presented, or another one.
        case otherBrowser
    }

    /// The binding as seen from the presenting browser.
    public let binding: Binding
    /// Whether the link's code was used (its nonce is in the single-use ledger).
    public let used: Bool
    /// Whether the binding is the `postern_browser` cookie (`bindBrowser`) rather than the app's
    /// own PKCE verifier, which the hosted page never sees.
    public let browserBound: Bool

    public init(binding: Binding, used: Bool, browserBound: Bool = false) {
        self.binding = binding
        self.used = used
        self.browserBound = browserBound
    }

    /// The link was used, here: "you are already signed in".
    public var signedInHere: Bool { used && binding == .sameBrowser }
}
