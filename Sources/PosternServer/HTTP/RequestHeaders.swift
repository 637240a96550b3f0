import Foundation

/// The header lines of one request as libmicrohttpd received them, every occurrence kept, with
/// the framing check that needs them all.
///
/// libmicrohttpd 0.9.75 frames a body by the first `Transfer-Encoding` if there is one, else by
/// the first `Content-Length`, and silently ignores the rest. A proxy in front may pick another
/// header (the last `Content-Length`, or `Content-Length` over `Transfer-Encoding`); then the two
/// disagree on where the body ends, and the bytes after it are read as a second request that the
/// proxy never saw (request smuggling). So a request that states its length more than one way is
/// refused rather than guessed at; so is one with whitespace in a header's name (RFC 9112 §5.1:
/// `Content-Length : 4` read by a proxy that trims the name frames a body libmicrohttpd does not).
/// libmicrohttpd refuses those itself as the server starts it (CMicroHTTPD's shim): this check
/// holds if a build of it does not.
struct RequestHeaders: Sendable {
    /// The headers the router reads, names lower-cased; repeated lines joined with ", " in
    /// arrival order, as RFC 9110 §5.3 combines them (X-Forwarded-For needs every hop).
    private(set) var values: [String: String] = [:]
    /// Every `Content-Length` value, in order.
    private(set) var contentLengths: [String] = []
    /// Every `Transfer-Encoding` value, in order.
    private(set) var transferEncodings: [String] = []
    /// Whether a header's name holds a space or a tab (libmicrohttpd hands on `Name : value` as
    /// the name "Name ").
    private(set) var whitespaceInName = false

    /// The names handed on to the router; others are not kept.
    static let forwarded: Set<String> = [
        "authorization", "content-type", "x-forwarded-for", "accept-language", "cookie", "origin",
        // A Standard Webhooks provider's signature (`/v1/delivery-events/standard-webhooks`), under
        // both names: the standard's and Svix's, which Resend sends.
        "webhook-id", "webhook-timestamp", "webhook-signature", "svix-id", "svix-timestamp", "svix-signature",
    ]

    /// Records one header line.
    mutating func add(name: String, value: String) {
        if name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) { whitespaceInName = true }
        let name = name.lowercased()
        switch name {
        case "content-length": contentLengths.append(value)
        case "transfer-encoding": transferEncodings.append(value)
        default: break
        }
        guard Self.forwarded.contains(name) else { return }
        if let earlier = values[name] {
            values[name] = earlier + (name == "cookie" ? "; " : ", ") + value
        } else {
            values[name] = value
        }
    }

    /// Why the body's length is ambiguous, or nil when it is stated at most one way.
    var framingConflict: String? {
        if whitespaceInName {
            return "A header has whitespace between its name and the colon."
        }
        if !transferEncodings.isEmpty && !contentLengths.isEmpty {
            return "The request has both Content-Length and Transfer-Encoding."
        }
        if transferEncodings.count > 1 {
            return "The request has more than one Transfer-Encoding header."
        }
        if let encoding = transferEncodings.first,
            !HTTPWhitespace.trimmed(encoding.utf8[...]).elementsEqual("chunked".utf8, by: { HTTPWhitespace.lowercased($0) == $1 })
        {
            // libmicrohttpd reads only "chunked"; any other coding (or a list) leaves the body's
            // end to guesswork.
            return "Transfer-Encoding must be chunked."
        }
        let lengths = contentLengths.flatMap { $0.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) }
            .map { Array(HTTPWhitespace.trimmed($0)) }
        if let first = lengths.first {
            guard lengths.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }) else {
                return "Content-Length must be a number."
            }
            // Identical repeats are allowed (RFC 9112 §6.3): every reader finds the same length.
            if lengths.contains(where: { $0 != first }) {
                return "The request has Content-Length headers that differ."
            }
        }
        return nil
    }
}
