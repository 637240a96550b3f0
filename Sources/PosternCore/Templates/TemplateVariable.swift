/// The variables of one family of templates (the mails, the hosted pages): a closed set, one case
/// per variable, such as `{{link}}` or `{{#displayName}}`.
///
/// Each family is its own type, so a page template cannot name a mail's variable or be rendered
/// with a mail's values. A name that is not a case of the family, or that the template's kind does
/// not declare, is an unknown variable and fails `templates check`. The raw values are the slots
/// of the variables in a ``TemplateContext`` and run from 0 in declaration order, so rendering
/// looks values up by index instead of hashing names.
public protocol TemplateVariable: RawRepresentable, CaseIterable, Hashable, Comparable, Sendable, CustomStringConvertible
where RawValue == Int, AllCases == [Self] {
    /// The name used in template source, e.g. `expiresInMinutes`.
    var name: String { get }
}

extension TemplateVariable {
    /// The name used in template source.
    public var description: String { name }

    /// The variable of this family a template names, or nil when none has that name.
    public init?(name: String) {
        // Only the compiler of a template asks, once per tag: a scan of a few dozen cases.
        guard let variable = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = variable
    }

    /// Declaration order, so lists of variables read the same every time.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
