import Foundation
import PosternCore

/// The error shape of the flows' errors. (Documents that are not wire bodies — the JWKS, the app
/// association files, the OpenAPI document — are `JSONValue`s, written by its `sortedJSONText`:
/// `JSONSerialization`'s sorted keys compare under a `Locale`, which loads ICU's locale data.)
enum JSONAnswer {
    static func error(_ error: AuthError) -> HTTPResponse {
        .error(error.httpStatus, rawCode: error.code, message: error.message, details: error.details)
    }
}
