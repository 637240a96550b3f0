/// The three parts every mail has, each a template of its own.
public enum TemplatePart: String, Sendable, Hashable, CaseIterable {
    /// The Subject header: values raw; the rendered text is folded onto one line.
    case subject
    /// The text/plain part: values raw.
    case text
    /// The text/html part: values HTML-escaped.
    case html

    /// The file extension of the part, e.g. `sign-in.txt`.
    public var fileExtension: String {
        switch self {
        case .subject: "subject"
        case .text: "txt"
        case .html: "html"
        }
    }

    /// The part whose file extension is `fileExtension`, or nil.
    public init?(fileExtension: String) {
        guard let part = Self.allCases.first(where: { $0.fileExtension == fileExtension }) else { return nil }
        self = part
    }

    /// Whether values are HTML-escaped in this part.
    var escapesHTML: Bool { self == .html }
}
