import Foundation
import PosternCore

/// JSON answers that are not wire bodies: documents built as dictionaries (the JWKS) and the
/// error shape of the flows' errors. (The OpenAPI document is a `JSONValue`, encoded by APIJSON.)
enum JSONAnswer {
    static func encode(_ object: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func error(_ error: AuthError) -> HTTPResponse {
        .error(error.httpStatus, rawCode: error.code, message: error.message, details: error.details)
    }
}
