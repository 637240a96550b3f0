import Foundation

/// A mail as RFC 5322 / MIME bytes: headers, then multipart/alternative with a text and an HTML
/// part, both UTF-8 quoted-printable, CRLF line ends throughout.
///
/// Every input is checked by the initializer, so ``bytes()`` cannot fail. Core has no randomness
/// and no clock: the date and the Message-ID token are passed in.
public struct MimeMessage: Sendable, Hashable {
    /// The sender (From).
    public let from: MailMailbox
    /// The recipient (To).
    public let to: MailMailbox
    /// The subject, one line.
    public let subject: String
    /// The text/plain body.
    public let textBody: String
    /// The text/html body.
    public let htmlBody: String
    /// The Date header's instant (written in UTC).
    public let date: Date
    /// The Message-ID with its angle brackets, `<token@sender-domain>`.
    public let messageID: String
    /// The Content-Language value, if any.
    public let contentLanguage: String?
    private let boundary: String

    /// A message from `from` to `to`.
    ///
    /// - Parameters:
    ///   - messageIDToken: random, 8 to 64 characters of `A-Z a-z 0-9 - _` (e.g. 16 random bytes
    ///     in base64url); the Message-ID is `<token@domain of from>` and the part boundary uses it too.
    ///   - contentLanguage: the locale the text is in, e.g. `de`.
    /// - Throws: ``MimeError/controlCharacterInSubject`` for a subject with CR, LF or another
    ///   control character; ``MimeError/invalidMessageIDToken``; ``MimeError/invalidLanguageTag``.
    public init(
        from: MailMailbox, to: MailMailbox, subject: String, textBody: String, htmlBody: String, date: Date,
        messageIDToken: String, contentLanguage: String? = nil
    ) throws(MimeError) {
        if subject.unicodeScalars.contains(where: ControlCharacters.isControl) { throw .controlCharacterInSubject }
        guard (8...64).contains(messageIDToken.utf8.count),
            messageIDToken.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default:
                    false
                }
            })
        else { throw .invalidMessageIDToken }
        if let contentLanguage, MailLocale.normalized(contentLanguage) != contentLanguage.lowercased() {
            throw .invalidLanguageTag
        }
        self.from = from
        self.to = to
        self.subject = subject
        self.textBody = textBody
        self.htmlBody = htmlBody
        self.date = date
        self.messageID = "<\(messageIDToken)@\(from.domain)>"
        self.contentLanguage = contentLanguage
        // "=_" cannot occur in quoted-printable text ("=" is always followed by hex or a line end),
        // so the boundary cannot collide with a body.
        self.boundary = "=_alt_" + messageIDToken
    }

    /// The message of a rendered mail, with its subject, bodies and language.
    ///
    /// - Throws: ``MimeError`` as ``init(from:to:subject:textBody:htmlBody:date:messageIDToken:contentLanguage:)``.
    public init(_ rendered: RenderedMail, from: MailMailbox, to: MailMailbox, date: Date, messageIDToken: String) throws(MimeError) {
        try self.init(
            from: from, to: to, subject: rendered.subject, textBody: rendered.text, htmlBody: rendered.html, date: date,
            messageIDToken: messageIDToken, contentLanguage: rendered.locale)
    }

    /// The SMTP envelope: MAIL FROM the sender (or `returnPath`, for bounces), RCPT TO the recipient.
    public func envelope(returnPath: EmailAddress? = nil) -> MailEnvelope {
        MailEnvelope(sender: (returnPath ?? from.address).address, recipients: [to.address.address])
    }

    /// The whole message, ready for SMTP DATA or an `.eml` file.
    public func bytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1_024 + (textBody.utf8.count + htmlBody.utf8.count) * 11 / 10)
        var head = ""
        head += "Date: \(UTCDateTime(date).rfc5322Text)\r\n"
        head += MimeHeaderEncoding.header("From", tokens: Self.mailboxTokens(from, headerName: "From"))
        head += MimeHeaderEncoding.header("To", tokens: Self.mailboxTokens(to, headerName: "To"))
        head += MimeHeaderEncoding.header("Subject", tokens: MimeHeaderEncoding.unstructuredTokens(subject, headerName: "Subject"))
        head += "Message-ID: \(messageID)\r\n"
        head += "MIME-Version: 1.0\r\n"
        head += "Auto-Submitted: auto-generated\r\n"
        head += "X-Auto-Response-Suppress: All\r\n"
        if let contentLanguage { head += "Content-Language: \(contentLanguage)\r\n" }
        head += "Content-Type: multipart/alternative;\r\n boundary=\"\(boundary)\"\r\n"
        head += "\r\n"
        out.append(contentsOf: head.utf8)
        appendPart(subtype: "plain", body: textBody, to: &out)
        appendPart(subtype: "html", body: htmlBody, to: &out)
        out.append(contentsOf: "--\(boundary)--\r\n".utf8)
        return out
    }

    private func appendPart(subtype: String, body: String, to out: inout [UInt8]) {
        out.append(contentsOf: "--\(boundary)\r\n".utf8)
        out.append(contentsOf: "Content-Type: text/\(subtype); charset=utf-8\r\n".utf8)
        out.append(contentsOf: "Content-Transfer-Encoding: quoted-printable\r\n\r\n".utf8)
        QuotedPrintable.encode(body, into: &out)
        // This CRLF belongs to the boundary line that follows, not to the body.
        out.append(contentsOf: "\r\n".utf8)
    }

    private static func mailboxTokens(_ mailbox: MailMailbox, headerName: String) -> [String] {
        guard let name = mailbox.displayName else { return [mailbox.address.address] }
        return MimeHeaderEncoding.phraseTokens(name, headerName: headerName) + ["<\(mailbox.address.address)>"]
    }
}

/// Who a message is sent from and to at the SMTP level (MAIL FROM, RCPT TO).
public struct MailEnvelope: Sendable, Hashable {
    /// The reverse path (MAIL FROM).
    public let sender: String
    /// The forward paths (RCPT TO).
    public let recipients: [String]

    /// An envelope from `sender` to `recipients`.
    public init(sender: String, recipients: [String]) {
        self.sender = sender
        self.recipients = recipients
    }
}

/// A mail ready for a transport: its bytes, envelope and Message-ID.
public struct OutgoingMail: Sendable, Hashable {
    /// The Message-ID, `<token@domain>`, for logs and the outbox record.
    public let messageID: String
    /// The whole message (CRLF line ends).
    public let bytes: [UInt8]
    /// MAIL FROM and RCPT TO.
    public let envelope: MailEnvelope
}

extension MailRenderer {
    /// Renders `message` and builds it as MIME in one step: what the outbox worker calls.
    ///
    /// - Parameters:
    ///   - preferences: locales most wanted first (request, then account); `en` is the fallback.
    ///   - now: the send time, for the Date header and for how long the link has left.
    ///   - from: the sender mailbox (`--mail-from`).
    ///   - messageIDToken: fresh random text, see ``MimeMessage``.
    ///   - envelopeSender: the reverse path (MAIL FROM) when it is not `from`'s address: the
    ///     message's VERP address (``BounceAddress``).
    /// - Throws: ``MimeError`` when the recipient address or the token is unusable.
    public func compose(
        _ message: MailMessage, preferences: [String?], now: Date, from: MailMailbox, messageIDToken: String,
        envelopeSender: String? = nil
    ) throws(MimeError) -> OutgoingMail {
        let rendered = render(message, preferences: preferences, now: now)
        let to = try MailMailbox(message.recipient)
        let mime = try MimeMessage(rendered, from: from, to: to, date: now, messageIDToken: messageIDToken)
        var envelope = mime.envelope()
        if let envelopeSender { envelope = MailEnvelope(sender: envelopeSender, recipients: envelope.recipients) }
        return OutgoingMail(messageID: mime.messageID, bytes: mime.bytes(), envelope: envelope)
    }
}
