import Foundation
import PosternCore
import PosternTestSupport
import Testing

/// Reports as relays send them back. `postfixFailure` is the DSN Debian's Postfix 3.7 wrote for a
/// message to an unknown local user (its reverse path and dates stand in for the live ones).
enum ReportSamples {
    static func postfixFailure(to reversePath: String, recipient: String = "nobody-here@relay.test") -> String {
        """
        From MAILER-DAEMON  Tue Dec  1 15:20:29 2026
        Return-Path: <>
        X-Original-To: \(reversePath)
        Delivered-To: \(reversePath)
        Received: by relay.test (Postfix)
        \tid A5E2BFBA08A; Tue,  1 Dec 2026 15:20:29 +0000 (UTC)
        Date: Tue,  1 Dec 2026 15:20:29 +0000 (UTC)
        From: Mail Delivery System <MAILER-DAEMON@relay.test>
        Subject: Undelivered Mail Returned to Sender
        To: \(reversePath)
        Auto-Submitted: auto-replied
        MIME-Version: 1.0
        Content-Type: multipart/report; report-type=delivery-status;
        \tboundary="9E168FBA086.1796138429/relay.test"
        Message-Id: <20261201152029.A5E2BFBA08A@relay.test>

        This is a MIME-encapsulated message.

        --9E168FBA086.1796138429/relay.test
        Content-Description: Notification
        Content-Type: text/plain; charset=us-ascii

        <\(recipient)>: unknown user: "\(recipient.split(separator: "@")[0])"

        --9E168FBA086.1796138429/relay.test
        Content-Description: Delivery report
        Content-Type: message/delivery-status

        Reporting-MTA: dns; relay.test
        X-Postfix-Queue-ID: 9E168FBA086
        X-Postfix-Sender: rfc822; \(reversePath)
        Arrival-Date: Tue,  1 Dec 2026 15:20:29 +0000 (UTC)

        Final-Recipient: rfc822; \(recipient)
        Original-Recipient: rfc822;\(recipient)
        Action: failed
        Status: 5.1.1
        Diagnostic-Code: X-Postfix; unknown user: "\(recipient.split(separator: "@")[0])"

        --9E168FBA086.1796138429/relay.test
        Content-Description: Undelivered Message
        Content-Type: message/rfc822

        Return-Path: <\(reversePath)>
        From: x@relay.test
        To: \(recipient)
        Subject: t

        hello

        --9E168FBA086.1796138429/relay.test--

        """
    }

    /// A delay warning in Postfix's shape (`delay_warning_time`), CRLF line ends.
    static func delayed(to reversePath: String) -> String {
        """
        To: \(reversePath)
        Content-Type: multipart/report; report-type=delivery-status; boundary="B"

        --B
        Content-Type: text/plain

        This is a warning only.
        --B
        Content-Type: message/delivery-status

        Reporting-MTA: dns; relay.test

        Final-Recipient: rfc822; ann@example.org
        Action: delayed
        Status: 4.4.1
        Diagnostic-Code: smtp; 451 4.4.1 try again later
        Will-Retry-Until: Sun, 6 Dec 2026 15:20:29 +0000

        --B--
        """.replacingOccurrences(of: "\n", with: "\r\n")
    }

    /// An abuse report in RFC 5965's shape (appendix B), sent to an abuse desk: the reverse path
    /// is only in the returned message's Return-Path.
    static func abuse(returnPath: String) -> String {
        """
        From: <abusedesk@example.com>
        To: <abuse@example.net>
        Subject: FW: Earn money
        MIME-Version: 1.0
        Content-Type: multipart/report; report-type=feedback-report;
             boundary="part1_13d.2e68ed54_boundary"

        --part1_13d.2e68ed54_boundary
        Content-Type: text/plain; charset="US-ASCII"

        This is an email abuse report for an email message received from IP 192.0.2.1.
        --part1_13d.2e68ed54_boundary
        Content-Type: message/feedback-report

        Feedback-Type: abuse
        User-Agent: SomeGenerator/1.0
        Version: 1

        --part1_13d.2e68ed54_boundary
        Content-Type: text/rfc822-headers
        Content-Transfer-Encoding: base64

        \(Data("Return-Path: <\(returnPath)>\r\nFrom: <somespammer@example.net>\r\nSubject: Earn money\r\n\r\n".utf8).base64EncodedString())
        --part1_13d.2e68ed54_boundary--
        """
    }
}

@Suite("Delivery reports")
struct DeliveryReportTests {
    @Test("Postfix's own DSN: a permanent failure with its status, words and every reverse-path candidate")
    func postfixDSN() throws {
        let report = try DeliveryReport.parse(Array(ReportSamples.postfixFailure(to: "bounce+12.3.0123456789abcdef@b.example.com").utf8))
        #expect(report.kind == .deliveryStatus)
        #expect(report.recipients.count == 1)
        let recipient = try #require(report.recipients.first)
        #expect(recipient.action == "failed" && recipient.status == "5.1.1" && recipient.isPermanentFailure && !recipient.isTransient)
        #expect(recipient.diagnostic == "unknown user: \"nobody-here\"")
        // X-Original-To, Delivered-To, To, X-Postfix-Sender and the returned message's Return-Path.
        #expect(report.reversePathCandidates.filter { $0.contains("bounce+12.3.0123456789abcdef@b.example.com") }.count == 5)
    }

    @Test("a delay (CRLF, quoted parameters) is transient; an abuse report has its feedback type and the base64 headers' Return-Path")
    func delayAndAbuse() throws {
        let delay = try DeliveryReport.parse(Array(ReportSamples.delayed(to: "bounce+1.1.0000000000000000@b.example.com").utf8))
        #expect(delay.recipients.first?.isTransient == true && delay.recipients.first?.isPermanentFailure == false)
        #expect(delay.recipients.first?.status == "4.4.1")
        let abuse = try DeliveryReport.parse(Array(ReportSamples.abuse(returnPath: "bounce+9.1.00ff00ff00ff00ff@b.example.com").utf8))
        #expect(abuse.kind == .feedback && abuse.feedbackType == "abuse")
        #expect(abuse.reversePathCandidates.contains("<bounce+9.1.00ff00ff00ff00ff@b.example.com>"))
    }

    @Test("what is not a report is told apart, and says why without repeating it")
    func notReports() {
        func error(_ text: String) -> DeliveryReportError? {
            do {
                _ = try DeliveryReport.parse(Array(text.utf8))
                return nil
            } catch {
                return error
            }
        }
        #expect(error("Subject: I am on vacation\n\nBack on Monday.") == .notAReport)
        #expect(error("Content-Type: multipart/mixed; boundary=x\n\n--x\n\nhi\n--x--") == .notAReport)
        #expect(error("Content-Type: multipart/report; report-type=disposition-notification; boundary=x\n\n--x--") == .notAReport)
        #expect(error("Content-Type: multipart/report; report-type=delivery-status\n\nsecret-token-123") == .malformed("the report has no boundary"))
        #expect(error("Content-Type: multipart/report; report-type=delivery-status; boundary=x\n\n--x\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; a\n--x--")
            == .malformed("the delivery status names no recipient"))
        #expect(error(String(repeating: "a", count: DeliveryReport.maximumSize + 1)) == .tooLarge)
        #expect(error("") == .notAReport)
        #expect(DeliveryReportError.malformed("x").description.contains("secret") == false)
    }
}

@Suite("Bounces: VERP reverse paths and the intake")
struct BounceIntakeTests {
    static func harness(bounceAddress: String? = "bounce@bounces.example.com") throws -> FlowHarness {
        try FlowHarness { config in config.bounceAddress = try? bounceAddress.map(BounceAddress.init) }
    }

    /// Queues a sign-in mail for `email`; returns its outbox id and its reverse path.
    static func sent(_ h: FlowHarness, _ email: String) throws -> (Int64, String) {
        try h.service.emailLink.send(EmailLinkRequest(email: email))
        let id = try #require(try h.service.operators.outboxMessages(state: nil, limit: 1).first?.id)
        return (id, try #require(h.service.bounces.envelopeSender(messageID: id, recipient: try EmailAddress.parse(email))))
    }

    func take(_ h: FlowHarness, _ text: String) throws -> BounceResult { try h.service.bounces.take(Array(text.utf8)) }

    func suppressed(_ h: FlowHarness, _ email: String) throws -> Bool {
        try h.store.read { try $0.isSuppressed(try EmailAddress.parse(email)) }
    }

    @Test("--bounce-address is checked; each message gets its own tagged reverse path")
    func addresses() throws {
        #expect(try BounceAddress("Bounce@Bounces.Example.com").description == "bounce@bounces.example.com")
        for bad in ["bounce", "a+b@x.example", "@x.example", "b@localhost", "b@x.example.", "bé@x.example", String(repeating: "b", count: 21) + "@x.example"] {
            #expect(throws: SettingsError.self) { try BounceAddress(bad) }
        }
        let h = try Self.harness()
        let (first, path) = try Self.sent(h, "ann@example.org")
        let (_, other) = try Self.sent(h, "bob@example.org")
        #expect(path.hasPrefix("bounce+\(first).") && path.hasSuffix("@bounces.example.com") && path != other)
        #expect(path.split(separator: "@")[0].count <= 64)
        #expect(try Self.harness(bounceAddress: nil).service.bounces.envelopeSender(messageID: 1, recipient: try EmailAddress.parse("a@example.org")) == nil)
    }

    @Test("Postfix's DSN to a message's reverse path: bounced, the address suppressed, the detail without the address")
    func failure() throws {
        let h = try Self.harness()
        let (id, path) = try Self.sent(h, "nobody-here@relay.test")
        let result = try take(h, ReportSamples.postfixFailure(to: path))
        #expect(result == BounceResult(outcome: .bounced, messageID: id, status: "5.1.1", reason: nil))
        #expect(try suppressed(h, "nobody-here@relay.test"))
        let bounce = try #require(try h.store.read { try $0.outboxMessage(id: id) }?.bounce)
        #expect(bounce.kind == .failed && bounce.status == "5.1.1" && bounce.detail == "unknown user: \"<recipient>\"")
        #expect(h.service.bounces.metrics.snapshot().first { $0.outcome == .bounced }?.count == 1)
    }

    @Test("a delay records without suppressing; a failure then replaces it; a later delay never hides the failure")
    func delays() throws {
        let h = try Self.harness()
        let (id, path) = try Self.sent(h, "ann@example.org")
        #expect(try take(h, ReportSamples.delayed(to: path)).outcome == .delayed)
        #expect(try !suppressed(h, "ann@example.org"))
        #expect(try h.store.read { try $0.outboxMessage(id: id) }?.bounce?.kind == .delayed)
        #expect(try take(h, ReportSamples.postfixFailure(to: path, recipient: "ann@example.org")).outcome == .bounced)
        #expect(try take(h, ReportSamples.delayed(to: path)).outcome == .delayed)
        #expect(try h.store.read { try $0.outboxMessage(id: id) }?.bounce?.kind == .failed)
        #expect(try suppressed(h, "ann@example.org"))
    }

    @Test("an abuse report names the message only in its returned headers: a complaint, the address suppressed")
    func complaint() throws {
        let h = try Self.harness()
        let (id, path) = try Self.sent(h, "carol@example.org")
        #expect(try take(h, ReportSamples.abuse(returnPath: path)) == BounceResult(outcome: .complaint, messageID: id, status: "abuse", reason: nil))
        #expect(try suppressed(h, "carol@example.org"))
    }

    @Test("attacks: a forged or altered tag, another message's id, a report naming a victim's address — nothing is suppressed")
    func forgeries() throws {
        let h = try Self.harness()
        let (id, path) = try Self.sent(h, "victim@example.org")
        let (otherID, _) = try Self.sent(h, "attacker@example.org")
        let local = path.split(separator: "@")[0]
        let fields = local.dropFirst("bounce+".count).split(separator: ".")
        let forgedTag = "bounce+\(id).\(fields[1]).\(String(repeating: "0", count: 16))@bounces.example.com"
        // The attacker's own valid tag on the victim's id, and a tag of the victim's id moved to another id.
        let movedID = "bounce+\(otherID).\(fields[1]).\(fields[2])@bounces.example.com"
        let unknownKey = "bounce+\(id).999999.\(fields[2])@bounces.example.com"
        let otherDomain = "bounce+\(id).\(fields[1]).\(fields[2])@evil.example.com"
        for reversePath in [forgedTag, movedID, unknownKey, otherDomain, "victim@example.org"] {
            let result = try take(h, ReportSamples.postfixFailure(to: reversePath, recipient: "victim@example.org"))
            #expect(result.outcome == .ignored && result.messageID == nil, "\(reversePath)")
        }
        #expect(try !suppressed(h, "victim@example.org") && !suppressed(h, "attacker@example.org"))
        // The report's Final-Recipient is never believed: a valid tag suppresses that message's own recipient.
        _ = try take(h, ReportSamples.postfixFailure(to: path, recipient: "someone-else@example.org"))
        #expect(try suppressed(h, "victim@example.org") && !suppressed(h, "someone-else@example.org"))
        // Case folding by a relay does not break the match.
        let (upperID, upperPath) = try Self.sent(h, "dana@example.org")
        #expect(try take(h, ReportSamples.postfixFailure(to: upperPath.uppercased())).messageID == upperID)
    }

    @Test("attack: an id given out again (SQLite reuses a purged outbox's ids): the tag of the attacker's old mail with that id does not verify for the victim's")
    func reusedID() throws {
        let h = try Self.harness()
        let (id, _) = try Self.sent(h, "victim@example.org")
        // What the attacker's own mail with this id carried, before the outbox was purged and the id given out again.
        let held = try #require(h.service.bounces.envelopeSender(messageID: id, recipient: try EmailAddress.parse("attacker@example.org")))
        for recipient in ["victim@example.org", "attacker@example.org"] {
            let result = try take(h, ReportSamples.postfixFailure(to: held, recipient: recipient))
            #expect(result.outcome == .ignored && result.messageID == nil)
        }
        #expect(try !suppressed(h, "victim@example.org") && !suppressed(h, "attacker@example.org"))
    }

    @Test("not reports and unmatched reports are ignored with their reason; an empty body is an error; no --bounce-address matches nothing")
    func ignored() throws {
        let h = try Self.harness()
        let vacation = try take(h, "Subject: Out of office\n\nBack Monday.")
        #expect(vacation.outcome == .ignored && vacation.reason?.contains("not a delivery report") == true)
        expectAuthError("INVALID_ARGUMENT") { _ = try take(h, " \r\n") }
        let (id, path) = try Self.sent(h, "erin@example.org")
        let success = ReportSamples.postfixFailure(to: path).replacingOccurrences(of: "Action: failed", with: "Action: delivered")
            .replacingOccurrences(of: "Status: 5.1.1", with: "Status: 2.0.0")
        #expect(try take(h, success) == BounceResult(outcome: .ignored, messageID: id, status: "2.0.0",
                                                  reason: "the report says the message was delivered, relayed or expanded"))
        // A report for mail housekeeping has deleted already.
        _ = try h.store.write { tx in
            for claim in try tx.claimDue(.mail, owner: "w", now: h.clock.unixSeconds(), leaseUntil: h.clock.unixSeconds() + 60, limit: 10) {
                _ = try tx.markSent(.mail, id: claim.message.id, owner: "w", now: h.clock.unixSeconds(), reply: "250 ok")
            }
            return try tx.purgeFinished(.mail, before: Int64.max, limit: 10)
        }
        #expect(try take(h, ReportSamples.postfixFailure(to: path)).reason?.contains("no longer in the outbox") == true)
        #expect(try !suppressed(h, "nobody-here@relay.test") && !suppressed(h, "erin@example.org"))
        let off = try Self.harness(bounceAddress: nil)
        #expect(try take(off, ReportSamples.postfixFailure(to: path)).reason?.contains("--bounce-address") == true)
        #expect(h.service.bounces.metrics.snapshot().first { $0.outcome == .ignored }?.count == 3)
    }
}
