internal import CCurl
import PosternCore

/// Sends mail to an SMTP relay through libcurl, over one connection reused across messages.
///
/// STARTTLS is required for `smtp://` (`CURLUSESSL_ALL`: no STARTTLS, no mail), `smtps://` is TLS
/// from the first byte, `smtp+plain://` has no TLS. Certificate and host name checks are always
/// on. After any failure the handle, and with it the connection, is dropped and the next message
/// opens a new one; a connection idle longer than the endpoint's `idleTimeout` is not reused.
///
/// Replies are classified by code and by the command they answer: 2xx sent; 4xx, timeouts and
/// connection failures transient; 5xx to RCPT TO or to the message itself permanent. A 5xx to
/// EHLO, STARTTLS, AUTH or MAIL FROM is a setup problem, not the recipient's, so it is transient
/// and suppresses nobody.
public final class SMTPTransport: MailTransport {
    private let endpoint: SMTPEndpoint
    private let password: String?
    private let exchange: SMTPExchange
    private var easy: CurlEasyHandle?

    /// A transport to `endpoint`, logging in with `password` (already read from its file) when the
    /// endpoint has a user name. No connection is opened until the first `deliver(_:)`.
    public init(endpoint: SMTPEndpoint, password: String?) {
        self.endpoint = endpoint
        self.password = password
        self.exchange = SMTPExchange(secret: password)
    }

    /// Sends `mail`; never throws, every failure is a ``DeliveryOutcome``.
    public func deliver(_ mail: OutgoingMail) -> DeliveryOutcome {
        deliver(mail) { true }
    }

    /// Sends `mail`, holding back the end of data (the final ".") until `gate` returns true; when it
    /// returns false the transfer is aborted and the message is not delivered.
    public func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
        guard SMTPTransport.isSafeEnvelopeAddress(mail.envelope.sender) else {
            return .transient(reply: "not sent: the sender address has characters SMTP cannot carry", connectionFailed: true)
        }
        guard !mail.envelope.recipients.isEmpty, mail.envelope.recipients.allSatisfy(SMTPTransport.isSafeEnvelopeAddress) else {
            return .permanent(reply: "not sent: a recipient address has characters SMTP cannot carry")
        }
        let handle: CurlEasyHandle
        do throws(CurlError) {
            if let easy {
                handle = easy
            } else {
                handle = try openHandle()
                easy = handle
            }
            try handle.set(CURLOPT_MAIL_FROM, "<\(mail.envelope.sender)>")
            try handle.setRecipients(mail.envelope.recipients.map { "<\($0)>" })
            try handle.set(CURLOPT_INFILESIZE, mail.bytes.count)
        } catch {
            easy = nil
            return .transient(reply: "not sent: \(error.message)", connectionFailed: true)
        }
        return withoutActuallyEscaping(gate) { gate in
            exchange.begin(mail.bytes, gate: gate)
            defer { exchange.end() }
            return perform(handle)
        }
    }

    private func perform(_ handle: CurlEasyHandle) -> DeliveryOutcome {
        do throws(CurlError) {
            try handle.perform()
            let code = exchange.replyCode ?? handle.responseCode
            return DeliveryOutcome.classify(replyCode: code == 0 ? 250 : code, reply: exchange.reply ?? "\(code)")
        } catch {
            easy = nil
            if exchange.gateRefused {
                return .transient(reply: "not sent: the previous outcome could not be recorded", connectionFailed: true)
            }
            return classifyFailure(error, responseCode: handle.responseCode)
        }
    }

    /// Drops the handle, closing its connection.
    public func close() { easy = nil }

    /// Goes through the relay's greeting, EHLO, STARTTLS and AUTH as a delivery does, then says
    /// QUIT, sending no mail: libcurl's SMTP connect phase is exactly those steps, and
    /// `CURLOPT_CONNECT_ONLY` stops after it; the QUIT is sent on the connection here, since
    /// curl closes a connect-only connection without one. For `postern check-config`.
    /// - Returns: nil when the relay accepted the login (or needs none), else what failed: the
    ///   step and the server's reply, or curl's error; never the password.
    public func checkRelay() -> String? {
        exchange.begin([], gate: { true })
        defer { exchange.end() }
        do throws(CurlError) {
            // A handle of its own, dropped (QUIT, then closed) before this returns.
            let handle = try openHandle(connectOnly: true)
            try handle.perform()
            let bye = try handle.converse("QUIT\r\n", timeout: endpoint.responseTimeout)
            return bye.hasPrefix("221") ? nil : "QUIT was answered \(String(bye.prefix(300)).debugDescription)"
        } catch {
            guard let code = exchange.replyCode, (400..<600).contains(code), let reply = exchange.reply else {
                return "curl: \(error.message)"
            }
            let step: String
            switch exchange.stage {
            case .greeting: step = "the greeting or EHLO"
            case .startTLS: step = "STARTTLS"
            case .authentication: step = "AUTH"
            case .sender, .recipient, .data, .other: step = "the connection"
            }
            return "\(step) was refused: \(reply)"
        }
    }

    private func classifyFailure(_ error: CurlError, responseCode: Int) -> DeliveryOutcome {
        let code = exchange.replyCode ?? responseCode
        let reply = exchange.reply ?? "curl: \(error.message)"
        guard (400..<600).contains(code) else {
            return .transient(reply: "curl: \(error.message)", connectionFailed: true)
        }
        switch exchange.stage {
        case .recipient, .data:
            return DeliveryOutcome.classify(replyCode: code, reply: reply)
        case .greeting, .startTLS, .authentication, .sender, .other:
            return .transient(reply: reply, connectionFailed: true)
        }
    }

    /// A handle for this endpoint; `connectOnly`: one that stops after the login (``checkRelay()``).
    private func openHandle(connectOnly: Bool = false) throws(CurlError) -> CurlEasyHandle {
        let handle = try CurlEasyHandle()
        try handle.set(CURLOPT_URL, endpoint.curlURL)
        switch endpoint.security {
        case .startTLS, .implicitTLS: try handle.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
        case .none: try handle.set(CURLOPT_USE_SSL, Int(CURLUSESSL_NONE.rawValue))
        }
        try handle.set(CURLOPT_SSL_VERIFYPEER, 1)
        try handle.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = endpoint.caFile { try handle.set(CURLOPT_CAINFO, caFile) }
        if let username = endpoint.username {
            try handle.set(CURLOPT_USERNAME, username)
            if let password { try handle.set(CURLOPT_PASSWORD, password) }
        }
        try handle.set(CURLOPT_CONNECTTIMEOUT, endpoint.connectTimeout)
        try handle.set(CURLOPT_SERVER_RESPONSE_TIMEOUT, endpoint.responseTimeout)
        try handle.set(CURLOPT_TIMEOUT, endpoint.totalTimeout)
        try handle.set(CURLOPT_MAXAGE_CONN, endpoint.idleTimeout)
        try handle.set(connectOnly ? CURLOPT_CONNECT_ONLY : CURLOPT_UPLOAD, 1)
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        try handle.setReadFunction(smtpReadBody)
        try handle.set(CURLOPT_READDATA, pointer: context)
        try handle.setWriteFunction(smtpDiscardOutput)
        // The debug stream is how the reply text and the command it answers are seen; VERBOSE only
        // turns the callback on (nothing is printed while a debug function is set).
        try handle.setDebugFunction(smtpWatchExchange)
        try handle.set(CURLOPT_DEBUGDATA, pointer: context)
        try handle.set(CURLOPT_VERBOSE, 1)
        return handle
    }

    /// False for addresses libcurl would pass to the server unchecked and that could break the
    /// command line: control characters (CR, LF), angle brackets, or no `@`.
    static func isSafeEnvelopeAddress(_ address: String) -> Bool {
        !address.isEmpty && address.utf8.count <= 320 && address.utf8.contains(UInt8(ascii: "@"))
            && !address.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "<" || $0 == ">" }
    }
}

/// What the callbacks of one transfer share with the transport: the body being read out, and the
/// last reply seen with the command it answered. Reached from C through `Unmanaged`; it lives as
/// long as the transport that registered it, which outlives every handle.
final class SMTPExchange {
    enum Stage {
        case greeting, startTLS, authentication, sender, recipient, data, other
    }

    private var body: [UInt8] = []
    private var offset = 0
    private var gate: (() -> Bool)?
    /// True when the gate said no and the transfer was aborted before its end.
    private(set) var gateRefused = false
    private let secret: String?
    /// The command last sent.
    private var command = Stage.greeting
    /// The command the last kept reply answered.
    private(set) var stage = Stage.greeting
    /// The last kept reply line, its control bytes removed: made a string only when asked for
    /// (``reply``), since only a transfer's last reply is (four per message, 2.6% of a drain's time
    /// when each was).
    private var replyLine: [UInt8] = []
    /// Its code.
    private(set) var replyCode: Int?

    /// The last reply line, cleaned: the password, if the server quoted it, as `***`; a 334 (an
    /// AUTH challenge, the server's half of the login) as its code alone; at most 300 characters.
    var reply: String? {
        guard let replyCode else { return nil }
        if replyCode == 334 { return "334" }
        var line = String(decoding: replyLine, as: UTF8.self)
        if let secret, line.contains(secret) { line = line.replacingOccurrences(of: secret, with: "***") }
        return String(line.prefix(300))
    }

    init(secret: String?) { self.secret = secret?.isEmpty == true ? nil : secret }

    /// Only for the duration of one transfer: `gate` is not escaping.
    func begin(_ bytes: [UInt8], gate: @escaping () -> Bool) {
        body = bytes
        offset = 0
        self.gate = gate
        gateRefused = false
        replyLine = []
        replyCode = nil
        stage = .greeting
        command = .greeting
    }

    func end() {
        body = []
        gate = nil
    }

    /// Copies the next part of the body. Before handing over the part that ends it, asks the gate
    /// once: curl knows the size and sends the final "." as soon as the last byte is read, without
    /// asking for more, so the gate cannot wait for an end-of-file call. A refusal aborts the
    /// transfer (`CURL_READFUNC_ABORT`): the message is not completed.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, body.count - offset)
        // The part that ends the body, or the end itself for an empty body.
        if offset + count == body.count, let gate {
            self.gate = nil
            if !gate() {
                gateRefused = true
                return Int(CURL_READFUNC_ABORT)
            }
        }
        guard count > 0 else { return 0 }
        body.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            UnsafeMutableRawPointer(buffer).copyMemory(from: base + offset, byteCount: count)
        }
        offset += count
        return count
    }

    func sawCommand(_ bytes: UnsafeRawBufferPointer) {
        // Only the verb is looked at: AUTH lines carry credentials.
        let verb = String(decoding: bytes.prefix(8).prefix { $0 != 0x20 && $0 != 0x0D && $0 != 0x0A }, as: UTF8.self).uppercased()
        switch verb {
        case "EHLO", "HELO": command = .greeting
        case "STARTTLS": command = .startTLS
        case "AUTH": command = .authentication
        case "MAIL": command = .sender
        case "RCPT": command = .recipient
        case "DATA": command = .data
        case "QUIT", "RSET", "NOOP": command = .other
        default: break  // an AUTH continuation line
        }
    }

    func sawReply(_ bytes: UnsafeRawBufferPointer) {
        // After a failure curl says QUIT before giving up; its 221 must not hide the failing reply.
        guard command != .other else { return }
        let line = bytes.prefix(512).filter { $0 >= 0x20 && $0 != 0x7F }
        guard line.count >= 3, line.prefix(3).allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return }
        replyCode = line.prefix(3).reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        replyLine = line
        stage = command
    }
}

private func smtpReadBody(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let buffer, let context else { return 0 }
    return Unmanaged<SMTPExchange>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: size * count)
}

private func smtpDiscardOutput(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    size * count
}

private func smtpWatchExchange(
    _ handle: UnsafeMutableRawPointer?, _ type: curl_infotype, _ data: UnsafeMutablePointer<CChar>?, _ size: Int,
    _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let data, let context, type == CURLINFO_HEADER_IN || type == CURLINFO_HEADER_OUT else { return 0 }
    let exchange = Unmanaged<SMTPExchange>.fromOpaque(context).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if type == CURLINFO_HEADER_IN { exchange.sawReply(bytes) } else { exchange.sawCommand(bytes) }
    return 0
}

@available(*, unavailable)
extension SMTPExchange: Sendable {}
