import Foundation
import PosternCore

/// A request's JSON object, read field by field; a wrong type names the field.
struct JSONBody {
    private let object: [String: Any]

    /// Parses `bytes` (empty means `{}`).
    /// - Throws: `AuthError.invalidArgument` when the body is not a JSON object.
    init(_ bytes: [UInt8]) throws(AuthError) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            object = [:]
            return
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(bytes)), let object = parsed as? [String: Any] else {
            throw .invalidArgument("The body must be a JSON object.")
        }
        self.object = object
    }

    /// An optional string field; null counts as absent.
    func string(_ field: String) throws(AuthError) -> String? {
        guard let value = object[field], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw .invalidArgument("\(field) must be a string.") }
        return text
    }

    /// A required string field.
    func required(_ field: String) throws(AuthError) -> String {
        guard let text = try string(field) else { throw .invalidArgument("\(field) is required.") }
        return text
    }

    /// An optional boolean field.
    func bool(_ field: String) throws(AuthError) -> Bool? {
        guard let value = object[field], !(value is NSNull) else { return nil }
        // JSON true/false arrive as NSNumber whose objCType is "c"; numbers have other types.
        guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else {
            throw .invalidArgument("\(field) must be true or false.")
        }
        return number.boolValue
    }

    /// Whether the field is present, even as null (for "set to null" in PATCH).
    func has(_ field: String) -> Bool { object[field] != nil }

    /// An optional JSON-object field, re-encoded as text.
    func objectText(_ field: String) throws(AuthError) -> String? {
        guard let value = object[field], !(value is NSNull) else { return nil }
        guard value is [String: Any], let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else {
            throw .invalidArgument("\(field) must be a JSON object.")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Builds JSON answers, with explicit nulls where the contract has them.
enum JSONAnswer {
    static func encode(_ object: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON response of `object`.
    static func respond(_ status: Int, _ object: Any) -> HTTPResponse { .json(status, encode(object)) }

    static func iso(_ seconds: Int64) -> String {
        UTCTimestamp.iso8601(seconds)
    }

    static func error(_ error: AuthError) -> HTTPResponse {
        .error(error.httpStatus, code: error.code, message: error.message, details: error.details)
    }
}
