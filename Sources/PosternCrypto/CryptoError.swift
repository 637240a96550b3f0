internal import COpenSSL

/// A failure inside OpenSSL or a malformed crypto input.
///
/// Built like hummingbird's errors: a struct over a private enum, so cases can be added without
/// breaking callers. `description` names the failing call and OpenSSL's reason, never key material.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case openSSL(call: String, reason: String)
        case malformed(String)
        case authenticationFailed
    }
    private let kind: Kind

    /// An OpenSSL call returned failure.
    static func openSSL(_ call: String) -> CryptoError {
        var reason = "no reason given"
        let code = ERR_get_error()
        if code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        ERR_clear_error()
        return CryptoError(kind: .openSSL(call: call, reason: reason))
    }

    /// An encoded input (a key, a hash string, a token) does not have the expected form.
    public static func malformed(_ what: String) -> CryptoError { CryptoError(kind: .malformed(what)) }

    /// A sealed box or signature did not verify.
    public static let authenticationFailed = CryptoError(kind: .authenticationFailed)

    public var description: String {
        switch kind {
        case .openSSL(let call, let reason): return "OpenSSL \(call) failed: \(reason)"
        case .malformed(let what): return "malformed \(what)"
        case .authenticationFailed: return "authentication failed"
        }
    }
}

/// The one funnel for OpenSSL calls that return 1 on success.
@inline(__always)
func check(_ result: Int32, _ call: @autoclosure () -> String) throws(CryptoError) {
    if result != 1 { throw CryptoError.openSSL(call()) }
}
