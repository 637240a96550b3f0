/// What a request asked to be sent by SMS. Like ``MailIntent``: recorded in the same transaction
/// as the request; the SMS worker decides what the message says at delivery time (an
/// ``SMSComposing``), so nothing secret waits in the queue.
public enum SMSIntent: Sendable, Hashable, Codable {
    /// The code proving a number for the phone claim `claimID`.
    case phoneClaim(claimID: String)
    /// A sign-in code by SMS for the sign-in request `requestID`.
    case phoneSignIn(requestID: String)
    /// The notice to a number's holder that the phone claim `claimID` waits for its release (the
    /// number is its account's only way in, so no cool-off moves it).
    case phoneTransferNotice(claimID: String)
    /// An operator's test message (`postern sms test`); `reference` names it in the log.
    case test(reference: String)

    /// A stable name for logs and metrics.
    public var name: String {
        switch self {
        case .phoneClaim: "phone-claim"
        case .phoneSignIn: "phone-sign-in"
        case .phoneTransferNotice: "phone-transfer-notice"
        case .test: "test"
        }
    }

    /// The intent as one line for a database column: `name:id`.
    public var storageText: String {
        switch self {
        case .phoneClaim(let id), .phoneSignIn(let id), .phoneTransferNotice(let id), .test(let id): "\(name):\(id)"
        }
    }

    /// The intent written by ``storageText``; nil for anything else.
    public init?(storageText: String) {
        guard let colon = storageText.firstIndex(of: ":") else { return nil }
        let id = String(storageText[storageText.index(after: colon)...])
        switch storageText[..<colon] {
        case "phone-claim": self = .phoneClaim(claimID: id)
        case "phone-sign-in": self = .phoneSignIn(requestID: id)
        case "phone-transfer-notice": self = .phoneTransferNotice(claimID: id)
        case "test": self = .test(reference: id)
        default: return nil
        }
    }
}
