/// The characters no template value, header text or setting shown on one line may hold: C0 and
/// C1 controls, DEL and the Unicode line and paragraph separators (a CR/LF in a value could add
/// header lines or break a subject).
public enum ControlCharacters {
    /// Whether `scalar` is one of them.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0)
            || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// `value` with each of them replaced by a space.
    public static func replacedBySpaces(_ value: String) -> String {
        // Printable ASCII, the common case, has none: answered from its bytes.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return value }
        guard value.unicodeScalars.contains(where: isControl) else { return value }
        var cleaned = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            cleaned.append(isControl(scalar) ? " " : scalar)
        }
        return String(cleaned)
    }
}
