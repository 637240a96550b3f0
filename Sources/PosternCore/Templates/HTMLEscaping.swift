/// Escapes text for HTML element content and quoted attribute values.
public enum HTMLEscaping {
    /// Appends `value` to `out` with `& < > " '` replaced by character references.
    public static func append(_ value: String, to out: inout String) {
        let utf8 = value.utf8
        guard utf8.contains(where: needsEscape) else {
            out.append(value)
            return
        }
        var chunkStart = utf8.startIndex
        var index = chunkStart
        while index != utf8.endIndex {
            let reference: String? =
                switch utf8[index] {
                case UInt8(ascii: "&"): "&amp;"
                case UInt8(ascii: "<"): "&lt;"
                case UInt8(ascii: ">"): "&gt;"
                case UInt8(ascii: "\""): "&quot;"
                case UInt8(ascii: "'"): "&#39;"
                default: nil
                }
            let next = utf8.index(after: index)
            if let reference {
                // An ASCII byte always starts a scalar, so both indices are valid String indices.
                out.append(contentsOf: value[chunkStart..<index])
                out.append(reference)
                chunkStart = next
            }
            index = next
        }
        out.append(contentsOf: value[chunkStart..<utf8.endIndex])
    }

    /// `value` with `& < > " '` replaced by character references.
    public static func escape(_ value: String) -> String {
        var out = ""
        append(value, to: &out)
        return out
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"): true
        default: false
        }
    }
}
