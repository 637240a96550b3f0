import Foundation

/// Any JSON value, for the parts of the contract the app owns (a user's `attributes`).
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    /// A number that is a whole number within Int64.
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// An object whose values are all strings: a log line, an error answer, a public key.
    public static func object(strings: [String: String]) -> JSONValue { .object(strings.mapValues(JSONValue.string)) }

    /// An array of strings.
    public static func array(strings: [String]) -> JSONValue { .array(strings.map(JSONValue.string)) }

    /// The value as compact JSON text with sorted keys and unescaped slashes: the bytes
    /// `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes, without its
    /// encoder machinery (a webhook body is written per delivered message, on the store's
    /// writer path). Numbers that are not whole go through `JSONEncoder`, for its formatting.
    public var sortedJSONText: String {
        var text = ""
        text.reserveCapacity(128)
        Self.append(self, to: &text)
        return text
    }

    private static func append(_ value: JSONValue, to text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .integer(let number): text += String(number)
        case .number(let number):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            text += (try? encoder.encode(number)).flatMap { String(data: $0, encoding: .utf8) } ?? "null"
        case .string(let string): appendQuoted(string, to: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                append(item, to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            // Ordered as JSONEncoder's `.sortedKeys` orders them: by the keys' UTF-8 bytes.
            for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { text += "," }
                appendQuoted(key, to: &text)
                text += ":"
                append(members[key]!, to: &text)
            }
            text += "}"
        }
    }

    private static func appendQuoted(_ string: String, to text: inout String) {
        text += "\""
        // Most strings (ids, tokens, addresses) need no escape: appended whole, not scalar by
        // scalar (measured: the token endpoint's answer spent more time here than signing).
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
