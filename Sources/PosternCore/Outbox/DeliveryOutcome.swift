/// What one delivery attempt came to, as a transport classifies it.
///
/// `reply` is the server's last reply line (or a short description of a local failure). It is kept
/// on the message record, logged, and made a suppression's reason, so transports never put a
/// secret or a password in it, and a server's own words come through ``classify(replyCode:reply:)``
/// or ``classify(httpStatus:reply:)``, which clean them as the delivery log does
/// (``DeliveryLogKey/clean(_:)``: servers quote recipients, and a filter may quote a line of the
/// message, its link with a live code).
public enum DeliveryOutcome: Sendable, Hashable {
    /// A 2xx reply to the end of data: the server took the message.
    case sent(reply: String)
    /// A 4xx reply, a timeout or a connection failure: try again later.
    /// `connectionFailed` is true when the connection itself failed (nothing about this message),
    /// so the rest of a worker's batch should wait too.
    case transient(reply: String, connectionFailed: Bool)
    /// A 5xx reply: the message will never be accepted; the recipient is suppressed.
    case permanent(reply: String)

    /// The reply line kept on the message record.
    public var reply: String {
        switch self {
        case .sent(let reply), .transient(let reply, _), .permanent(let reply): reply
        }
    }

    /// The outcome of an SMTP reply code (`0` when there was none, e.g. the connection failed).
    public static func classify(replyCode: Int, reply text: String) -> DeliveryOutcome {
        let reply = DeliveryLogKey.clean(text)
        return switch replyCode {
        case 200..<300: .sent(reply: reply)
        case 500..<600: .permanent(reply: reply)
        case 421: .transient(reply: reply, connectionFailed: true)
        case 400..<500: .transient(reply: reply, connectionFailed: false)
        default: .transient(reply: reply, connectionFailed: true)
        }
    }

    /// The outcome of an HTTP mail provider's answer (`0` when there was none). Any 2xx is success
    /// (202 Accepted included: Kratos counted SendGrid's 202 as a failure and sent six copies).
    /// 429 and 5xx say the provider is refusing for now: retried, and the rest of the batch waits
    /// too. 401 and 403 are a configuration problem (a key or a signature refused), not the
    /// recipient's: retried, so nothing is lost while the operator fixes it. 408 and 425 retry
    /// this message. Any other 4xx is the provider refusing this message for good: dead, and the
    /// recipient suppressed as for an SMTP 5xx (so a receiver answers 4xx only about the recipient
    /// or the message, never about its own trouble).
    public static func classify(httpStatus: Int, reply text: String) -> DeliveryOutcome {
        let reply = DeliveryLogKey.clean(text)
        return switch httpStatus {
        case 200..<300: .sent(reply: reply)
        case 408, 425: .transient(reply: reply, connectionFailed: false)
        case 401, 403, 429: .transient(reply: reply, connectionFailed: true)
        case 400..<500: .permanent(reply: reply)
        default: .transient(reply: reply, connectionFailed: true)
        }
    }
}
