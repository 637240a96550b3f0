import Foundation
import PosternCore
import Synchronization

/// Amazon SNS as Postern meets it, for unit tests of Core and the router: an RSA key and its
/// self-signed certificate made by `openssl` in a temporary directory, messages signed with it as
/// SNS signs them (the signed string is written out here field by field, not taken from Core, so a
/// wrong order in Core fails), and, as ``ProviderHTTP``, the certificate served at every `.pem`
/// URL and 200 at every other (a `SubscribeURL`), each GET recorded.
public final class TestSNS: ProviderHTTP, Sendable {
    /// A topic tests configure.
    public static let topic = "arn:aws:sns:us-east-1:123456789012:postern-ses"
    /// The certificate's URL on a real SNS host.
    public static let certificateURL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem"

    private let directory: URL
    /// The certificate, PEM.
    public let certificatePEM: [UInt8]
    private let gets = Mutex<[String]>([])

    /// Makes the key and the certificate.
    /// - Throws: when `openssl` fails.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("postern-sns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory.appendingPathComponent("key.pem").path,
            "-out", directory.appendingPathComponent("cert.pem").path, "-subj", "/CN=sns.amazonaws.com", "-days", "2",
        ])
        certificatePEM = Array(try Data(contentsOf: directory.appendingPathComponent("cert.pem")))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The URLs fetched so far.
    public var fetched: [String] { gets.withLock { $0 } }

    public func get(_ url: String) throws(ProviderHTTPError) -> ProviderHTTPResponse {
        gets.withLock { $0.append(url) }
        return ProviderHTTPResponse(status: 200, body: url.hasSuffix(".pem") ? certificatePEM : [], cacheControl: nil)
    }

    public func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?) throws(ProviderHTTPError)
        -> ProviderHTTPResponse
    {
        throw ProviderHTTPError("SNS is not posted to")
    }

    /// The RSASSA-PKCS1-v1_5 signature of `text` with SHA-1 (`version` "1") or SHA-256 ("2"), base64.
    public func sign(_ text: String, version: String) throws -> String {
        let input = directory.appendingPathComponent("in-\(UUID().uuidString)")
        let output = directory.appendingPathComponent("sig-\(UUID().uuidString)")
        try Data(text.utf8).write(to: input)
        try Self.openssl([
            "dgst", version == "1" ? "-sha1" : "-sha256", "-sign", directory.appendingPathComponent("key.pem").path, "-out", output.path,
            input.path,
        ])
        return try Data(contentsOf: output).base64EncodedString()
    }

    /// When test messages say they were sent: ``ManualClock``'s start, the tests' "now".
    public static let sentAt: Int64 = 1_800_000_000

    /// `seconds` as SNS writes a `Timestamp` (`2027-01-15T08:00:00.000Z`).
    public static func timestamp(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// A signed notification carrying `message` (an SES event's JSON) for `topic`, sent at `sentAt`
    /// with the id `messageID` (a new one when nil).
    public func notification(
        _ message: String, topic: String = TestSNS.topic, certificateURL: String = TestSNS.certificateURL, version: String = "2",
        subject: String? = "Amazon SES Email Event Notification", sentAt: Int64 = TestSNS.sentAt, messageID: String? = nil
    ) throws -> [UInt8] {
        var fields: [String: String] = [
            "Type": "Notification", "MessageId": messageID ?? UUID().uuidString.lowercased(), "TopicArn": topic, "Message": message,
            "Timestamp": Self.timestamp(sentAt), "SignatureVersion": version, "SigningCertURL": certificateURL,
        ]
        if let subject { fields["Subject"] = subject }
        var text = "Message\n\(message)\nMessageId\n\(fields["MessageId"] ?? "")\n"
        if let subject { text += "Subject\n\(subject)\n" }
        text += "Timestamp\n\(fields["Timestamp"] ?? "")\nTopicArn\n\(topic)\nType\nNotification\n"
        fields["Signature"] = try sign(text, version: version)
        return Array(try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
    }

    /// A signed `SubscriptionConfirmation` (or `UnsubscribeConfirmation`) whose `SubscribeURL` is `subscribeURL`.
    public func confirmation(
        subscribeURL: String, type: String = "SubscriptionConfirmation", topic: String = TestSNS.topic, version: String = "2"
    ) throws -> [UInt8] {
        let id = UUID().uuidString.lowercased()
        let message = "You have chosen to subscribe to the topic \(topic)."
        let token = "2336412f37fb687f5d51e6e2425f004aed2a5a5fc4b8d5c1a7f2b1fa0c2e1f9a"
        let timestamp = Self.timestamp(Self.sentAt)
        let text = "Message\n\(message)\nMessageId\n\(id)\nSubscribeURL\n\(subscribeURL)\nTimestamp\n\(timestamp)\nToken\n\(token)\nTopicArn\n\(topic)\nType\n\(type)\n"
        let fields: [String: String] = [
            "Type": type, "MessageId": id, "TopicArn": topic, "Message": message, "Timestamp": timestamp, "Token": token,
            "SubscribeURL": subscribeURL, "SignatureVersion": version, "SigningCertURL": Self.certificateURL,
            "Signature": try sign(text, version: version),
        ]
        return Array(try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
    }

    /// An SES bounce event of `bounceType` for `recipients`.
    public static func bounce(_ recipients: [String], bounceType: String = "Permanent") -> String {
        let list = recipients.map { #"{"emailAddress":"\#($0)","action":"failed","status":"5.1.1","diagnosticCode":"smtp; 550 5.1.1 \#($0) unknown"}"# }
        return #"{"notificationType":"Bounce","bounce":{"bounceType":"\#(bounceType)","bounceSubType":"General","bouncedRecipients":[\#(list.joined(separator: ","))],"timestamp":"2026-12-07T05:00:00.000Z","feedbackId":"0100"},"mail":{"messageId":"0100","destination":[]}}"#
    }

    /// An SES complaint event for `recipients`.
    public static func complaint(_ recipients: [String]) -> String {
        let list = recipients.map { #"{"emailAddress":"\#($0)"}"# }
        return #"{"eventType":"Complaint","complaint":{"complainedRecipients":[\#(list.joined(separator: ","))],"complaintFeedbackType":"abuse","timestamp":"2026-12-07T05:00:00.000Z","feedbackId":"0100"},"mail":{"messageId":"0100"}}"#
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ProviderHTTPError("openssl \(arguments.first ?? "") failed") }
    }
}
