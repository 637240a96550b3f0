import Foundation
import PosternCrypto

/// One message Amazon SNS POSTs to an HTTP(S) subscription: a notification (an SES event in its
/// `Message`), or a subscription's confirmation. Its signature covers the canonical string of the
/// fields its type names, as AWS documents ("Verifying the signatures of Amazon SNS messages").
public struct SNSMessage: Sendable, Equatable {
    /// What the message is.
    public enum Kind: String, Sendable, Equatable {
        /// A message published to the topic (an SES event in `Message`).
        case notification = "Notification"
        /// The subscription asks to be confirmed (a GET of `SubscribeURL`).
        case subscriptionConfirmation = "SubscriptionConfirmation"
        /// The subscription was removed.
        case unsubscribeConfirmation = "UnsubscribeConfirmation"
    }

    /// `Type`.
    public var kind: Kind
    /// `MessageId`.
    public var messageID: String
    /// `TopicArn`: the topic it was published to.
    public var topicARN: String
    /// `Message`: for a notification, the SES event's JSON.
    public var message: String
    /// `Timestamp`, as sent.
    public var timestamp: String
    /// `Subject`, when the publisher gave one (a notification only).
    public var subject: String?
    /// `SubscribeURL` (a confirmation only).
    public var subscribeURL: String?
    /// `Token` (a confirmation only).
    public var token: String?
    /// `1` (SHA1withRSA) or `2` (SHA256withRSA).
    public var signatureVersion: String
    /// The signature, base64 as sent.
    public var signature: String
    /// `SigningCertURL`: where the certificate of the signing key is.
    public var signingCertURL: String

    /// The message of the JSON body `body`.
    /// - Throws: `AuthError.invalidArgument` naming what is missing or unknown.
    public init(json body: [UInt8]) throws(AuthError) {
        struct Wire: Decodable {
            var `Type`: String?
            var MessageId: String?
            var TopicArn: String?
            var Message: String?
            var Timestamp: String?
            var Subject: String?
            var SubscribeURL: String?
            var Token: String?
            var SignatureVersion: String?
            var Signature: String?
            var SigningCertURL: String?
        }
        let wire: Wire
        do { wire = try JSONDecoder().decode(Wire.self, from: Data(body)) } catch {
            throw .invalidArgument("The body must be an Amazon SNS message: a JSON object of strings.")
        }
        guard let type = wire.Type else { throw .invalidArgument("The SNS message has no Type.") }
        guard let kind = Kind(rawValue: type) else { throw .invalidArgument("The SNS message's Type is not one Postern takes.") }
        func field(_ value: String?, _ name: String) throws(AuthError) -> String {
            guard let value else { throw .invalidArgument("The SNS message has no \(name).") }
            return value
        }
        self.kind = kind
        messageID = try field(wire.MessageId, "MessageId")
        topicARN = try field(wire.TopicArn, "TopicArn")
        message = try field(wire.Message, "Message")
        timestamp = try field(wire.Timestamp, "Timestamp")
        signatureVersion = try field(wire.SignatureVersion, "SignatureVersion")
        signature = try field(wire.Signature, "Signature")
        signingCertURL = try field(wire.SigningCertURL, "SigningCertURL")
        subject = wire.Subject
        subscribeURL = wire.SubscribeURL
        token = wire.Token
        if kind != .notification {
            _ = try field(subscribeURL, "SubscribeURL")
            _ = try field(token, "Token")
        }
    }

    /// The string SNS signed: each field's name and value, each on its own line, in the order AWS
    /// documents for the type — `Message`, `MessageId`, `Subject` (when present), `Timestamp`,
    /// `TopicArn`, `Type` for a notification; `Message`, `MessageId`, `SubscribeURL`, `Timestamp`,
    /// `Token`, `TopicArn`, `Type` for a confirmation.
    public var canonicalString: String {
        var pairs: [(String, String)] = [("Message", message), ("MessageId", messageID)]
        switch kind {
        case .notification:
            if let subject { pairs.append(("Subject", subject)) }
            pairs += [("Timestamp", timestamp), ("TopicArn", topicARN), ("Type", kind.rawValue)]
        case .subscriptionConfirmation, .unsubscribeConfirmation:
            pairs += [("SubscribeURL", subscribeURL ?? ""), ("Timestamp", timestamp), ("Token", token ?? ""), ("TopicArn", topicARN),
                ("Type", kind.rawValue)]
        }
        return pairs.map { "\($0.0)\n\($0.1)\n" }.joined()
    }

    /// `Timestamp` as Unix seconds: ISO 8601 in UTC, as SNS writes it (`2026-12-07T05:00:00.000Z`,
    /// fractional seconds optional); nil when it is not that.
    public var sentAt: Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: timestamp) { return Int64(date.timeIntervalSince1970.rounded(.down)) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: timestamp).map { Int64($0.timeIntervalSince1970) }
    }

    /// The hash its `SignatureVersion` names; nil for a version Postern does not know.
    public var digest: X509Certificate.Digest? {
        switch signatureVersion {
        case "1": .sha1
        case "2": .sha256
        default: nil
        }
    }

    /// Whether `certificate`'s key signed this message.
    public func isSigned(by certificate: X509Certificate) -> Bool {
        guard let digest, let signature = Data(base64Encoded: signature), !signature.isEmpty else { return false }
        return certificate.verifiesRSA(Array(signature), of: Array(canonicalString.utf8), digest: digest)
    }
}
