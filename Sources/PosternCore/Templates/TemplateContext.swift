/// The values a template of one family is rendered with: one optional string per variable.
///
/// Values are stored by slot, so a lookup during rendering is an array index. Control characters
/// (CR, LF, tabs and the rest of C0/C1, DEL) in a value are replaced by spaces when it is set, so
/// no value can break a header or inject lines into a part.
public struct TemplateContext<Variable: TemplateVariable>: Sendable, Hashable {
    private var values: [String?]

    /// An empty context: every variable absent.
    public init() {
        values = Array(repeating: nil, count: Variable.allCases.count)
    }

    /// An empty context filled from `pairs`.
    public init(_ pairs: [Variable: String]) {
        self.init()
        for (variable, value) in pairs { self[variable] = value }
    }

    /// The value of `variable`, or nil when it is absent.
    public subscript(variable: Variable) -> String? {
        get { values[variable.rawValue] }
        set { values[variable.rawValue] = newValue.map(ControlCharacters.replacedBySpaces) }
    }

    /// Whether a section on `variable` is shown: the value is present and not empty.
    func isShown(_ variable: Variable) -> Bool {
        guard let value = values[variable.rawValue] else { return false }
        return !value.isEmpty
    }
}
