internal import CCurl

/// A libcurl failure: the `CURLcode`, curl's sentence for it, and the detail from the error
/// buffer. The one error funnel for libcurl; it never holds a password (curl does not put one in
/// its messages, and URLs handed to curl carry no credentials).
struct CurlError: Error, CustomStringConvertible {
    /// The `CURLcode` as a number.
    let code: Int
    /// `curl_easy_strerror` plus the error buffer's detail, if any.
    let message: String

    var description: String { "curl error \(code): \(message)" }

    /// Throws a `CurlError` unless `result` is `CURLE_OK`.
    static func check(_ result: CURLcode, detail: String = "") throws(CurlError) {
        guard result != CURLE_OK else { return }
        throw CurlError(result, detail: detail)
    }

    init(_ result: CURLcode, detail: String = "") {
        code = Int(result.rawValue)
        let summary = String(cString: curl_easy_strerror(result))
        message = detail.isEmpty ? summary : "\(summary): \(detail)"
    }

    /// True for failures of the connection (resolve, connect, TLS, timeouts, a dropped link) rather
    /// than a reply about one message.
    var isConnectionFailure: Bool {
        let connection: Set<UInt32> = [
            CURLE_COULDNT_RESOLVE_HOST.rawValue, CURLE_COULDNT_CONNECT.rawValue, CURLE_OPERATION_TIMEDOUT.rawValue,
            CURLE_SSL_CONNECT_ERROR.rawValue, CURLE_PEER_FAILED_VERIFICATION.rawValue, CURLE_USE_SSL_FAILED.rawValue,
            CURLE_SEND_ERROR.rawValue, CURLE_RECV_ERROR.rawValue, CURLE_GOT_NOTHING.rawValue, CURLE_LOGIN_DENIED.rawValue,
            CURLE_SSL_CACERT_BADFILE.rawValue, CURLE_SSL_CERTPROBLEM.rawValue, CURLE_AUTH_ERROR.rawValue,
        ]
        return connection.contains(UInt32(code))
    }
}
