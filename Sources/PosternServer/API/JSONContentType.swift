import Foundation

/// Whether a request's `Content-Type` says its body is JSON.
///
/// Why it matters: a web page may send any site a cross-origin POST without asking first only as
/// `text/plain`, `application/x-www-form-urlencoded` or `multipart/form-data`. A JSON endpoint that
/// took such a body would let any page make its visitors' browsers send sign-in mail (or call any
/// other endpoint) in their name. `application/json` needs a CORS preflight, which Postern does
/// not grant.
enum JSONContentType {
    /// True for `application/json` with any parameters (`; charset=utf-8`), in any case.
    static func accepts(_ header: String?) -> Bool { RequestContentType.accepts(header, oneOf: ["application/json"]) }
}

/// Whether a request's `Content-Type` names one of the media types a route takes: the one
/// check for JSON routes (``JSONContentType``) and routes that take raw bytes (a mail report).
enum RequestContentType {
    /// True when `header`'s media type, without its parameters (`; charset=utf-8`) and the
    /// spaces and tabs around it, is one of `types`, in any case; false without a header.
    static func accepts(_ header: String?, oneOf types: [String]) -> Bool {
        guard let header else { return false }
        let mediaType = HTTPWhitespace.trimmed(header.utf8.prefix { $0 != UInt8(ascii: ";") })
        return types.contains { type in
            mediaType.elementsEqual(type.utf8) { HTTPWhitespace.lowercased($0) == HTTPWhitespace.lowercased($1) }
        }
    }
}
