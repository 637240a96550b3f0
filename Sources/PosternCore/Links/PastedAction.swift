/// What a pasted text turned out to hold, ready for the action handler.
public enum PastedAction: Sendable, Equatable {
    /// A full action link from this service, unwrapped and validated.
    case link(ActionLink)
    /// A bare oobCode (base64url), pasted without its link; its mode comes from verifying it.
    case oobCode(String)
    /// The 6-digit cross-device code of a sign-in mail; completing it also needs the address.
    case sixDigitCode(String)
}
