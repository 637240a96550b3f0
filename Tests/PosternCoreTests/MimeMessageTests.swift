import Foundation
import Testing
@testable import PosternCore

@Suite("MIME message")
struct MimeMessageTests {
    private func message(
        subject: String = "Reset your Postern password (requested 14:02 UTC)", text: String = "Hello\n",
        html: String = "<p>Hello</p>\n", fromName: String? = "Postern", toName: String? = nil,
        token: String = "Tok3n_-0123456789"
    ) throws -> MimeMessage {
        try MimeMessage(
            from: MailFixtures.mailbox("no-reply", "mail.example.org", name: fromName),
            to: MailFixtures.mailbox("jane", name: toName), subject: subject, textBody: text, htmlBody: html,
            date: MailFixtures.now, messageIDToken: token, contentLanguage: "en")
    }

    private func header(_ name: String, in bytes: [UInt8]) -> String? {
        MailFixtures.headers(of: bytes).first { $0.0 == name }?.1
    }

    @Test func headersInOrderWithInjectedDateAndMessageID() throws {
        let bytes = try message().bytes()
        #expect(MailFixtures.headers(of: bytes).map(\.0) == [
            "Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Auto-Submitted", "X-Auto-Response-Suppress",
            "Content-Language", "Content-Type",
        ])
        #expect(header("Date", in: bytes) == "Sun, 04 May 2025 14:02:07 +0000")
        #expect(header("From", in: bytes) == "Postern <no-reply@mail.example.org>")
        #expect(header("To", in: bytes) == "jane@example.com")
        #expect(header("Subject", in: bytes) == "Reset your Postern password (requested 14:02 UTC)")
        #expect(header("Message-ID", in: bytes) == "<Tok3n_-0123456789@mail.example.org>")
        #expect(header("MIME-Version", in: bytes) == "1.0")
        #expect(header("Auto-Submitted", in: bytes) == "auto-generated")
        #expect(header("Content-Type", in: bytes) == "multipart/alternative; boundary=\"=_alt_Tok3n_-0123456789\"")
    }

    @Test func dateHeaderFormatsOtherInstants() {
        #expect(UTCDateTime(Date(timeIntervalSince1970: 0)).rfc5322Text == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(UTCDateTime(Date(timeIntervalSince1970: 951_825_600)).rfc5322Text == "Tue, 29 Feb 2000 12:00:00 +0000")
        #expect(UTCDateTime(Date(timeIntervalSince1970: 4_102_444_799)).rfc5322Text == "Thu, 31 Dec 2099 23:59:59 +0000")
        #expect(UTCDateTime(Date(timeIntervalSince1970: -1)).rfc5322Text == "Wed, 31 Dec 1969 23:59:59 +0000")
    }

    @Test func textThenHTMLQuotedPrintableUTF8() throws {
        let text = String(decoding: try message().bytes(), as: UTF8.self)
        let plain = try #require(text.range(of: "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nHello\r\n"))
        let html = try #require(text.range(of: "Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>Hello</p>\r\n"))
        #expect(plain.lowerBound < html.lowerBound)
        #expect(text.hasSuffix("\r\n--=_alt_Tok3n_-0123456789--\r\n"))
    }

    @Test("a body written to break out of its part stays inside it: its own boundary, a lone dot, a forged header, long runs")
    func bodyCannotEndItsPart() throws {
        // What an attacker controls reaches the bodies (a display name, a device's name): here it
        // carries the message's own boundary lines, an SMTP end of data, a header and a second
        // part, in runs long enough for the eight-byte fast path of the encoding.
        let hostile = "Jane\n--=_alt_Tok3n_-0123456789\nContent-Type: text/html\n\n<script>x</script>\n.\n"
            + "--=_alt_Tok3n_-0123456789--\nFrom evil\n" + String(repeating: "AAAAAAA ", count: 30) + "\n.\r\nBcc: x@evil.test\n"
        let bytes = try message(text: hostile, html: "<p>" + hostile + "</p>").bytes()
        let lines = MailFixtures.lines(of: bytes)
        #expect(lines.filter { $0 == "--=_alt_Tok3n_-0123456789" }.count == 2, "the message's own two part boundaries only")
        #expect(lines.filter { $0 == "--=_alt_Tok3n_-0123456789--" }.count == 1)
        #expect(!lines.contains("."), "no line ends the SMTP data")
        #expect(!lines.contains { $0.hasPrefix("From ") })
        // Each boundary is followed by the part's own headers, not the forged one.
        let starts = lines.indices.filter { lines[$0] == "--=_alt_Tok3n_-0123456789" }
        #expect(starts.map { lines[$0 + 1] } == ["Content-Type: text/plain; charset=utf-8", "Content-Type: text/html; charset=utf-8"])
        #expect(lines.allSatisfy { $0.utf8.count <= 76 || $0.hasPrefix("Content-Type") || $0.hasPrefix("Subject") })
        // The parts decode to the text as given (line ends made CRLF).
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "--=_alt_Tok3n_-0123456789")
        #expect(parts.count == 4)
        let canonical = hostile.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        let plain = try #require(parts[1].components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n").data(using: .utf8))
        #expect(String(decoding: MailFixtures.decodeQuotedPrintable(Array(plain)), as: UTF8.self) == canonical + "\r\n")
    }

    @Test func subjectWithUmlautsBecomesEncodedWords() throws {
        let subject = "Passwort für Jürgen zurücksetzen (angefordert um 14:02 UTC) – äöüß €"
        let bytes = try message(subject: subject).bytes()
        let raw = try #require(header("Subject", in: bytes))
        #expect(raw.hasPrefix("=?utf-8?q?Passwort_f=C3=BCr_J=C3=BCrgen"))
        #expect(MailFixtures.decodeEncodedWords(raw) == subject)
        for line in MailFixtures.lines(of: bytes) { #expect(line.utf8.count <= 78) }
    }

    @Test func longSubjectsFoldAtSpacesWithinLineLimit() throws {
        let subject = Array(repeating: "Sign in to Postern", count: 8).joined(separator: " ") + " 123456"
        let bytes = try message(subject: subject).bytes()
        #expect(header("Subject", in: bytes) == subject)
        let raw = String(decoding: bytes, as: UTF8.self)
        #expect(raw.contains("Subject: Sign in to Postern"))
        #expect(raw.contains("\r\n Postern") || raw.contains("\r\n Sign") || raw.contains("\r\n in") || raw.contains("\r\n to"))
        for line in MailFixtures.lines(of: bytes) { #expect(line.utf8.count <= 78) }
    }

    @Test func subjectsThatWouldBeMisreadAreEncoded() throws {
        for subject in ["=?utf-8?q?not_a_word?=", String(repeating: "x", count: 120), "tab\u{A0}nbsp"] {
            let raw = try #require(header("Subject", in: try message(subject: subject).bytes()))
            #expect(raw.hasPrefix("=?utf-8?q?"))
            #expect(MailFixtures.decodeEncodedWords(raw) == subject)
        }
    }

    @Test func longEncodedSubjectKeepsWordsWithinLimits() throws {
        let subject = String(repeating: "Grüße 🚀 ", count: 30) + "Ende"
        let bytes = try message(subject: subject).bytes()
        let raw = try #require(header("Subject", in: bytes))
        #expect(MailFixtures.decodeEncodedWords(raw) == subject)
        for word in raw.split(separator: " ") { #expect(word.utf8.count <= 75) }
        for line in MailFixtures.lines(of: bytes) { #expect(line.utf8.count <= 78) }
    }

    @Test func displayNamesAreAtomsQuotedOrEncoded() throws {
        #expect(header("To", in: try message(toName: "Jane Doe").bytes()) == "Jane Doe <jane@example.com>")
        #expect(header("To", in: try message(toName: #"Doe, "JD" \ Jane"#).bytes()) == #""Doe, \"JD\" \\ Jane" <jane@example.com>"#)
        let encoded = try #require(header("From", in: try message(fromName: "Postern Bürgeramt").bytes()))
        #expect(encoded == "Postern =?utf-8?q?B=C3=BCrgeramt?= <no-reply@mail.example.org>")
        // Neighbouring non-ASCII words share one encoded word, so the space between them is in it.
        #expect(header("To", in: try message(toName: "Jürgen Müller").bytes()) == "=?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <jane@example.com>")
        #expect(header("From", in: try message(fromName: nil).bytes()) == "no-reply@mail.example.org")
    }

    @Test func controlCharactersAreRejectedBeforeBuilding() {
        #expect(throws: MimeError.controlCharacterInDisplayName) {
            try MailFixtures.mailbox("jane", name: "Jane\r\nBcc: victim@example.com")
        }
        #expect(throws: MimeError.controlCharacterInDisplayName) { try MailFixtures.mailbox("jane", name: "Jane\u{0}") }
        #expect(throws: MimeError.controlCharacterInDisplayName) { try MailFixtures.mailbox("jane", name: "Jane\u{85}") }
        #expect(throws: MimeError.controlCharacterInAddress) { try MailFixtures.mailbox("jane\r\nBcc: x") }
        #expect(throws: MimeError.controlCharacterInAddress) { try MailFixtures.mailbox("jane", "example.com>\nX") }
        #expect(throws: MimeError.controlCharacterInAddress) { try MailFixtures.mailbox("ja ne") }
        #expect(throws: MimeError.nonASCIIAddress) { try MailFixtures.mailbox("jürgen") }
        #expect(throws: MimeError.controlCharacterInSubject) { try message(subject: "Hi\r\nBcc: x") }
        #expect(throws: MimeError.invalidMessageIDToken) { try message(token: "short") }
        #expect(throws: MimeError.invalidMessageIDToken) { try message(token: "bad token with spaces") }
        #expect(throws: MimeError.invalidMessageIDToken) { try message(token: "abcdefgh@evil") }
        #expect(MimeError.controlCharacterInAddress.description.contains("address"))
    }

    @Test func crlfOnlyAndLinesWithinLimits() throws {
        let longLine = String(repeating: "word ", count: 1_000) + String(repeating: "x", count: 3_000)
        let text = "Lone\rCR and\r\nCRLF and \nLF\n\(longLine)\nTrailing space \nTab\t\n"
        let bytes = try message(text: text, html: "<p>\(longLine)</p>").bytes()
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "\n") { #expect(index > 0 && bytes[index - 1] == UInt8(ascii: "\r")) }
            if byte == UInt8(ascii: "\r") { #expect(index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\n")) }
        }
        for line in MailFixtures.lines(of: bytes) {
            #expect(line.utf8.count <= 78)
            #expect(line.utf8.count <= 998)
        }
        #expect(bytes.allSatisfy { $0 < 0x80 })
    }

    @Test(arguments: [
        "",
        "plain\n",
        "no final newline",
        "a = b, 100% =3D\n",
        "trailing spaces   \ntrailing tab\t\n \n\t",
        "From the start\nFrom: not mbox\n.\n..dots\n.x\n",
        "Grüße, 東京, 🚀👩‍👩‍👧 — and ﬁ\n",
        String(repeating: "ä", count: 200) + "\n" + String(repeating: "=", count: 100),
        String(repeating: "a", count: 75) + " " + String(repeating: "b", count: 75) + "F" + "\n" + String(repeating: ".", count: 80),
        "mixed\r\nline\rends\n\n",
    ])
    func quotedPrintableRoundTrips(text: String) {
        checkQuotedPrintable(text)
    }

    @Test("quoted-printable round trips for 5,000 random texts of runs, escapes, blanks, dots, From and line ends")
    func quotedPrintableRoundTripsRandomText() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "b", "=", ".", "F", "From ", "\r", "\n", "\r\n", " ", "\t", "é", "€", "\u{01}", "~", "<p>",
                      String(repeating: "x", count: 70), String(repeating: "=", count: 30), String(repeating: "y", count: 74)]
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...60, using: &generator)
            checkQuotedPrintable((0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
    }

    private func checkQuotedPrintable(_ text: String) {
        var encoded: [UInt8] = []
        QuotedPrintable.encode(text, into: &encoded)
        let decoded = String(decoding: MailFixtures.decodeQuotedPrintable(encoded), as: UTF8.self)
        let canonical = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
        #expect(decoded == canonical)
        for line in String(decoding: encoded, as: UTF8.self).components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 76)
            #expect(!line.hasSuffix(" ") && !line.hasSuffix("\t"))
            #expect(!line.hasPrefix(".") && !line.hasPrefix("From "))
        }
        // (A tab inside a line stays literal, as RFC 2045 allows.)
        #expect(encoded.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A })
    }

    @Test func mailFromSettingParses() throws {
        let plain = try MailMailbox.parse("Postern <no-reply@localhost>")
        #expect(plain.displayName == "Postern")
        #expect(plain.address.address == "no-reply@localhost")
        let quoted = try MailMailbox.parse(#"  "Doe, \"J\" Jane" <Jane@Example.COM> "#)
        #expect(quoted.displayName == #"Doe, "J" Jane"#)
        #expect(quoted.address.address == "Jane@example.com")
        #expect(try MailMailbox.parse("bare@example.com").displayName == nil)
        #expect(try MailMailbox.parse("<bare@example.com>").displayName == nil)
        #expect(throws: MimeError.controlCharacterInDisplayName) { try MailMailbox.parse("Evil\r\nBcc: x <a@example.com>") }
        #expect(throws: MimeError.invalidAddress) { try MailMailbox.parse("Name <not an address>") }
        #expect(throws: MimeError.invalidAddress) { try MailMailbox.parse("") }
    }

    @Test func envelopeIsSenderAndRecipient() throws {
        let mime = try message()
        #expect(mime.envelope() == MailEnvelope(sender: "no-reply@mail.example.org", recipients: ["jane@example.com"]))
        #expect(mime.envelope(returnPath: MailFixtures.address("bounces", "example.net")).sender == "bounces@example.net")
    }

    @Test func composeRendersAndBuildsInOneCall() throws {
        let renderer = try TemplateSet(sources: MailFixtures.minimalSources(locales: ["en", "de"]))
            .renderer(branding: Branding(appName: "Postern"))
        let message = MailMessage.sample(of: .signIn, now: MailFixtures.now)
        let mail = try renderer.compose(
            message, preferences: ["de-DE"], now: MailFixtures.now, from: MailFixtures.mailbox("no-reply", name: "Postern"),
            messageIDToken: "0123456789abcdef")
        #expect(mail.messageID == "<0123456789abcdef@example.com>")
        #expect(mail.envelope == MailEnvelope(sender: "no-reply@example.com", recipients: ["jane.doe@example.com"]))
        #expect(header("Subject", in: mail.bytes) == "[de] sign-in 123456")
        #expect(header("Content-Language", in: mail.bytes) == "de")
    }
}
