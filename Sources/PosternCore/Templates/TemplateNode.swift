/// One piece of a compiled template.
indirect enum TemplateNode<Variable: TemplateVariable>: Sendable, Hashable {
    /// Literal text, copied as is.
    case text(String)
    /// A variable's value, HTML-escaped when `escaped`; nothing when the variable is absent.
    case value(Variable, escaped: Bool)
    /// `children`, shown when the variable is present and non-empty (absent or empty when `inverted`).
    case section(Variable, inverted: Bool, children: [TemplateNode])
    /// Where a layout puts the message's own template (`{{>content}}`).
    case content
}
