/// The operator's product, the same in every mail and hosted page of an installation
/// (`--app-name`, `--support-email`).
public struct Branding: Sendable, Hashable {
    /// The product name (`{{appName}}`), e.g. "Postern".
    public var appName: String
    /// Where users can ask for help (`{{supportEmail}}`), if anywhere.
    public var supportEmail: String?

    /// Branding with `appName` and, optionally, a support address.
    public init(appName: String, supportEmail: String? = nil) {
        self.appName = appName
        self.supportEmail = supportEmail
    }
}
