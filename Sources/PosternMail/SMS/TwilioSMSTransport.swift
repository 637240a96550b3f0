import Foundation
import PosternCore

/// Sends SMS through Twilio's Messages API: `POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json`,
/// form-encoded `To`, `From` (or `MessagingServiceSid`) and `Body`, HTTP Basic with the account
/// SID and the auth token. Over libcurl (``CurlHTTPPoster``), certificates checked.
///
/// The reply kept on the message is the status and Twilio's message `sid` (2xx), or the status
/// and Twilio's error `code` (e.g. `HTTP 400 code 21211`): never the number, the text or the token.
/// Owned by one worker thread (not `Sendable`).
public final class TwilioSMSTransport: SMSTransport {
    /// How the sender is named.
    public enum Sender: Sendable, Hashable {
        /// `From`: a number or an alphanumeric sender ID.
        case from(String)
        /// `MessagingServiceSid`.
        case messagingService(String)
    }

    private let url: String
    private let accountSID: String
    private let authToken: String
    private let sender: Sender
    private let poster: CurlHTTPPoster

    /// A transport for `accountSID` at `baseURL` (`https://api.twilio.com`), authenticated with
    /// `authToken`.
    public init(baseURL: String, accountSID: String, authToken: String, sender: Sender, caFile: String?, timeout: Int64, targets: TargetAddressPolicy) {
        url = "\(baseURL)/2010-04-01/Accounts/\(accountSID)/Messages.json"
        self.accountSID = accountSID
        self.authToken = authToken
        self.sender = sender
        poster = CurlHTTPPoster(timeout: timeout, caFile: caFile, targets: targets)
    }

    /// `application/x-www-form-urlencoded`: everything but the unreserved characters escaped.
    static func formEncoded(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~")
        return fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }

    public func send(_ sms: OutgoingSMS) -> SMSResponse {
        var fields = [("To", sms.to.e164)]
        switch sender {
        case .from(let from): fields.append(("From", from))
        case .messagingService(let sid): fields.append(("MessagingServiceSid", sid))
        }
        fields.append(("Body", sms.body))
        let answer = poster.post(
            url: url,
            headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json", "User-Agent: Postern-SMS"],
            body: Self.formEncoded(fields), credentials: (accountSID, authToken))
        if let failure = answer.failure { return SMSResponse(status: 0, reply: failure) }
        return Self.response(status: answer.status, retryAfter: answer.retryAfter, body: answer.body)
    }

    /// Reads Twilio's JSON answer: `sid` on success, `code` (and nothing else of it) on failure.
    static func response(status: Int, retryAfter: Int64?, body: [UInt8]) -> SMSResponse {
        let json = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        if (200..<300).contains(status) {
            let sid = (json?["sid"] as? String).flatMap(safeToken)
            return SMSResponse(status: status, providerID: sid, reply: "HTTP \(status)" + (sid.map { " \($0)" } ?? ""))
        }
        var code: String?
        if let number = json?["code"] as? Int { code = String(number) } else if let text = json?["code"] as? String { code = safeToken(text) }
        return SMSResponse(
            status: status, retryAfter: retryAfter, providerCode: code, reply: "HTTP \(status)" + (code.map { " code \($0)" } ?? ""))
    }

    /// A provider token (a SID, a code) kept only when it is short and plain, so a reply can hold
    /// nothing an answer smuggled in.
    static func safeToken(_ text: String) -> String? {
        guard (1...64).contains(text.count), text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return nil
        }
        return text
    }
}
