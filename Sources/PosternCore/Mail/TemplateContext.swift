/// The values a template is rendered with: one optional string per ``TemplateVariable``.
///
/// Values are stored by slot, so a lookup during rendering is an array index. Control characters
/// (CR, LF, tabs and the rest of C0/C1, DEL) in a value are replaced by spaces when it is set, so
/// no value can break a header or inject lines into a part.
public struct TemplateContext: Sendable, Hashable {
    private var values: [String?]

    /// An empty context: every variable absent.
    public init() {
        values = Array(repeating: nil, count: TemplateVariable.allCases.count)
    }

    /// An empty context filled from `pairs`.
    public init(_ pairs: [TemplateVariable: String]) {
        self.init()
        for (variable, value) in pairs { self[variable] = value }
    }

    /// The value of `variable`, or nil when it is absent.
    public subscript(variable: TemplateVariable) -> String? {
        get { values[variable.rawValue] }
        set { values[variable.rawValue] = newValue.map(Self.withoutControlCharacters) }
    }

    /// Whether a section on `variable` is shown: the value is present and not empty.
    func isShown(_ variable: TemplateVariable) -> Bool {
        guard let value = values[variable.rawValue] else { return false }
        return !value.isEmpty
    }

    static func withoutControlCharacters(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: isControl) else { return value }
        var cleaned = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            cleaned.append(isControl(scalar) ? " " : scalar)
        }
        return String(cleaned)
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
            || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
