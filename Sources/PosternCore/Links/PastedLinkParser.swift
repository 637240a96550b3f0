/// Finds, unwraps and validates the action link in whatever a user pasted: a bare URL, a whole
/// mail (plain, HTML, quoted-printable debris), markdown, or a link rewritten by mail security
/// gateways; or a bare oobCode, or the 6-digit code.
///
/// Pure and linear in the text's length: no I/O, and no input makes it trap or take long.
public struct PastedLinkParser: Sendable {
    /// The longest text accepted, in UTF-8 bytes (1 MiB).
    public static let maximumInputBytes = 1 << 20
    /// The most gateway rewrites unwrapped around one link.
    public static let maximumWrapperDepth = 5

    /// The origin and hosts links must match.
    public let policy: LinkPolicy

    /// A parser that accepts links under `policy`.
    public init(policy: LinkPolicy) {
        self.policy = policy
    }

    /// What `text` holds.
    ///
    /// Throws a ``LinkRefusal`` saying what a person can do: ``LinkRefusal/tooLarge`` over
    /// ``maximumInputBytes``; ``LinkRefusal/ambiguous`` for two different valid links; otherwise,
    /// when no valid link is found, the refusal of the first action link seen (foreign host,
    /// missing code, Mimecast, …), or ``LinkRefusal/notAnActionLink`` when there was none. The same
    /// link seen twice (an HTML mail's `href` and its `originalsrc`) counts once, and so does a
    /// copy whose code was cut short for display: the whole code is kept.
    public func parse(_ text: String) throws(LinkRefusal) -> PastedAction {
        guard text.utf8.count <= Self.maximumInputBytes else { throw .tooLarge }
        var bytes = Array(text.utf8)
        if QuotedPrintableDebris.isPresent(in: bytes) {
            bytes = QuotedPrintableDebris.decode(bytes)
        }
        if HTMLEntityDecoding.isPresent(in: bytes) {
            bytes = HTMLEntityDecoding.decode(bytes)
        }
        let candidates = LinkCandidateScanner.candidates(in: bytes)
        var accepted: ActionLink?
        var firstRefusal: LinkRefusal?
        for candidate in candidates {
            switch ActionLinkReader.read(candidate.bytes, policy: policy) {
            case .irrelevant:
                continue
            case .refused(let refusal):
                if firstRefusal == nil {
                    firstRefusal = refusal
                }
            case .accepted(let link):
                guard let previous = accepted else {
                    accepted = link
                    continue
                }
                guard previous.mode == link.mode else { throw .ambiguous }
                if previous.oobCode == link.oobCode || previous.oobCode.hasPrefix(link.oobCode) {
                    continue
                }
                // A copy cut short for display ("…oobCode=AbC…") is the same link: keep the whole one.
                guard link.oobCode.hasPrefix(previous.oobCode) else { throw .ambiguous }
                accepted = link
            }
        }
        if let accepted {
            return .link(accepted)
        }
        if let firstRefusal {
            throw firstRefusal
        }
        if candidates.isEmpty, let bare = BareCodeReader.read(bytes) {
            return bare
        }
        throw .notAnActionLink
    }
}
