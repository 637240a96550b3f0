import Foundation
import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// Where SNS certificates may come from (the default rule against an attacker's URLs), and the
/// string an SNS signature covers.
@Suite("SNS: the certificate host rule and the canonical string")
struct SNSMessageTests {
    @Test("the default host rule takes https .pem URLs on sns.<region>.amazonaws.com, and only those")
    func defaultHosts() {
        let hosts = SNSCertificateHosts.amazon
        for url in [
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem",
            "https://sns.eu-central-1.amazonaws.com/SimpleNotificationService-01d088a6f77103d0fe307c0069e40ed6.pem",
            "https://SNS.US-EAST-1.AMAZONAWS.COM/x.pem",
        ] {
            #expect(hosts.allows(url, certificate: true), "\(url)")
        }
        for url in [
            "http://sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com.evil.com/x.pem",
            "https://evil.com/sns.us-east-1.amazonaws.com/x.pem",
            "https://evil.com/https://sns.us-east-1.amazonaws.com/x.pem",
            "https://user@sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com@evil.com/x.pem",
            "https://sns.us-east-1.amazonaws.com:443/x.pem",
            "https://sns.us-east-1.amazonaws.com:8443/x.pem",
            "https://sns.cn-north-1.amazonaws.com.cn/x.pem",
            "https://sns.amazonaws.com.cn/x.pem",
            "https://sns.amazonaws.com/x.pem",
            "https://x.sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com./x.pem",
            "https://sns..amazonaws.com/x.pem",
            "https://sns.us_east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com%2eevil.com/x.pem",
            "https://sns.us-east-1.amazonaws.com\\@evil.com/x.pem",
            "https://sns.us-east-1.amazonaws.com/x.txt",
            "https://sns.us-east-1.amazonaws.com/x.pem?evil=1",
            "https://sns.us-east-1.amazonaws.com/x.php?f=.pem",
            "https://sns.us-east-1.amazonaws.com/x.pem#",
            "https://sns.us-east-1.amazonaws.com/a b.pem",
            "https://sns.us-east-1.amazonaws.com",
            "https://[::1]/x.pem",
            "https://127.0.0.1/x.pem",
            "file:///etc/ssl/x.pem",
            " https://sns.us-east-1.amazonaws.com/x.pem",
        ] {
            #expect(!hosts.allows(url, certificate: true), "\(url)")
        }
    }

    @Test("a SubscribeURL may carry a query but must be https on an SNS host; as a certificate URL it is refused")
    func subscribeURL() {
        let url = "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:1:t&Token=2336"
        #expect(SNSCertificateHosts.amazon.allows(url, certificate: false))
        #expect(!SNSCertificateHosts.amazon.allows(url, certificate: true))
        #expect(!SNSCertificateHosts.amazon.allows("https://evil.com/?Action=ConfirmSubscription", certificate: false))
        #expect(!SNSCertificateHosts.amazon.allows("http://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription", certificate: false))
    }

    @Test("a pattern names exact labels, * for one label, :PORT for a port; * alone and junk are refused")
    func patterns() throws {
        let test = try SNSCertificateHosts(parsing: "localhost:8443, sns.*.amazonaws.com.cn")
        #expect(test.allows("https://localhost:8443/cert.pem", certificate: true))
        #expect(!test.allows("https://localhost/cert.pem", certificate: true))
        #expect(!test.allows("https://localhost:8444/cert.pem", certificate: true))
        #expect(test.allows("https://sns.cn-north-1.amazonaws.com.cn/x.pem", certificate: true))
        #expect(!test.allows("https://sns.us-east-1.amazonaws.com/x.pem", certificate: true))
        #expect(test.description == "localhost:8443,sns.*.amazonaws.com.cn")
        for bad in ["", "*", "*.*", "evil.com/x", "user@host", "host:0", "host:99999", "host:+1", "a..b", "-a.com"] {
            #expect(throws: SettingsError.self, "\(bad)") { try SNSCertificateHosts(parsing: bad) }
        }
        #expect(try Settings.resolve(flags: [:], environment: [:], file: [:]).snsCertificateHosts == .amazon)
    }

    @Test("the canonical string: a notification's fields in AWS's order, Subject only when present; a confirmation's with SubscribeURL and Token")
    func canonicalString() throws {
        let notification = try SNSMessage(json: Array(#"""
            {"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:us-east-1:1:t","Subject":"S","Message":"{\"a\":\"b\\nc\"}",
             "Timestamp":"2026-12-07T05:00:00.000Z","SignatureVersion":"1","Signature":"c2ln","SigningCertURL":"https://sns.us-east-1.amazonaws.com/c.pem",
             "UnsubscribeURL":"https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe"}
            """#.utf8))
        #expect(notification.canonicalString
            == "Message\n{\"a\":\"b\\nc\"}\nMessageId\nm-1\nSubject\nS\nTimestamp\n2026-12-07T05:00:00.000Z\nTopicArn\narn:aws:sns:us-east-1:1:t\nType\nNotification\n")
        #expect(notification.digest == .sha1)
        var bare = notification
        bare.subject = nil
        #expect(!bare.canonicalString.contains("Subject"))
        let confirmation = try SNSMessage(json: Array(#"""
            {"Type":"SubscriptionConfirmation","MessageId":"m-2","TopicArn":"arn:t","Message":"M","Token":"T","SubscribeURL":"https://s/?x",
             "Timestamp":"ts","SignatureVersion":"2","Signature":"c2ln","SigningCertURL":"https://s/c.pem"}
            """#.utf8))
        #expect(confirmation.canonicalString
            == "Message\nM\nMessageId\nm-2\nSubscribeURL\nhttps://s/?x\nTimestamp\nts\nToken\nT\nTopicArn\narn:t\nType\nSubscriptionConfirmation\n")
        #expect(confirmation.digest == .sha256)
    }

    @Test("a body that is not an SNS message is INVALID_ARGUMENT: not JSON, no Type, another Type, a confirmation without its Token")
    func malformed() {
        for body in [
            "not json", "[]", #"{"MessageId":"m"}"#, #"{"Type":"Other","MessageId":"m"}"#,
            #"{"Type":"SubscriptionConfirmation","MessageId":"m","TopicArn":"t","Message":"M","Timestamp":"ts","SignatureVersion":"2","Signature":"s","SigningCertURL":"u","SubscribeURL":"x"}"#,
            #"{"Type":"Notification","MessageId":1}"#,
        ] {
            let error = #expect(throws: AuthError.self, "\(body)") { try SNSMessage(json: Array(body.utf8)) }
            #expect(error?.code == "INVALID_ARGUMENT")
        }
    }

    @Test("a signature verifies with the certificate's key over the canonical string, SHA-1 and SHA-256; one changed byte does not")
    func signatures() throws {
        let sns = try TestSNS()
        let certificate = try X509Certificate(pem: sns.certificatePEM)
        for version in ["1", "2"] {
            let message = try SNSMessage(json: try sns.notification(TestSNS.bounce(["ann@example.com"]), version: version))
            #expect(message.isSigned(by: certificate))
            var tampered = message
            tampered.message = TestSNS.bounce(["bob@example.com"])
            #expect(!tampered.isSigned(by: certificate))
            var otherVersion = message
            otherVersion.signatureVersion = version == "1" ? "2" : "1"
            #expect(!otherVersion.isSigned(by: certificate))
            var unknown = message
            unknown.signatureVersion = "3"
            #expect(!unknown.isSigned(by: certificate))
        }
        #expect(throws: CryptoError.self) { try X509Certificate(pem: Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8)) }
        #expect(throws: CryptoError.self) { try X509Certificate(pem: []) }
    }
}
