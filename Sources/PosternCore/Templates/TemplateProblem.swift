/// One thing wrong with a template: what, in which template, and where.
///
/// `templates check` and start-up print every problem; none of them can surface at send time,
/// because only a template set without problems yields a ``MailRenderer``. Template text is not
/// secret, so the description quotes names from it.
public struct TemplateProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; compare with the static members.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case unclosedTag = "unclosed tag"
            case invalidTag = "invalid tag"
            case unclosedSection = "unclosed section"
            case mismatchedSection = "mismatched section"
            case unexpectedSectionEnd = "section end without a start"
            case unknownVariable = "unknown variable"
            case missingVariable = "missing variable"
            case misplacedContentSlot = "misplaced content slot"
            case unknownTemplateName = "unknown template name"
            case missingTemplate = "missing template"
            case unknownWord = "unknown word"
            case missingWord = "missing word"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A `{{` without its `}}`.
        public static let unclosedTag = Code(.unclosedTag)
        /// A tag whose name is not a plain identifier, or a tag form the engine does not support.
        public static let invalidTag = Code(.invalidTag)
        /// A `{{#name}}` or `{{^name}}` without its `{{/name}}`.
        public static let unclosedSection = Code(.unclosedSection)
        /// A `{{/name}}` that closes a different section than the one open.
        public static let mismatchedSection = Code(.mismatchedSection)
        /// A `{{/name}}` with no section open.
        public static let unexpectedSectionEnd = Code(.unexpectedSectionEnd)
        /// A variable the message kind does not declare (or no kind knows).
        public static let unknownVariable = Code(.unknownVariable)
        /// A variable the message kind needs in this part is never used (a sign-in mail without its link).
        public static let missingVariable = Code(.missingVariable)
        /// `{{>content}}` outside a layout, or a layout without exactly one.
        public static let misplacedContentSlot = Code(.misplacedContentSlot)
        /// A line of a `words.strings` file that is not `key = value` with a known key.
        public static let unknownWord = Code(.unknownWord)
        /// A word the fallback locale's `words.strings` lacks.
        public static let missingWord = Code(.missingWord)
        /// A file name that is no template of any message kind.
        public static let unknownTemplateName = Code(.unknownTemplateName)
        /// A part a message kind needs is absent in a locale.
        public static let missingTemplate = Code(.missingTemplate)

        /// The code in words, e.g. "unclosed tag".
        public var description: String { base.rawValue }
    }

    /// What is wrong.
    public let code: Code
    /// The template's name, e.g. `de/sign-in.html`.
    public let templateName: String
    /// The 1-based line, when the problem is at a place in the text.
    public let line: Int?
    /// The 1-based column (in Unicode scalars), when the problem is at a place in the text.
    public let column: Int?
    /// A sentence with the specifics, e.g. "'lnk' is not a variable of sign-in".
    public let detail: String

    /// A problem at `line`:`column` of `templateName`, or of the whole template when they are nil.
    public init(_ code: Code, templateName: String, line: Int? = nil, column: Int? = nil, detail: String) {
        self.code = code
        self.templateName = templateName
        self.line = line
        self.column = column
        self.detail = detail
    }

    /// `name:line:column: code: detail`, the form editors and compilers use.
    public var description: String {
        var place = templateName
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        return "\(place): \(code): \(detail)"
    }
}

/// The problems that kept templates from compiling or a template set from being used.
public struct TemplateErrors: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every problem found, in template-name order.
    public let problems: [TemplateProblem]

    /// Wraps `problems`.
    public init(problems: [TemplateProblem]) { self.problems = problems }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
