/// Where mail goes, parsed from `--smtp-url` (with `--smtp-ca-file`, `--smtp-password-file` and,
/// for an HTTP provider, `--mail-http-secret-file`).
///
/// Parsing is pure: the password file is named, not read; PosternMail reads it when it makes the
/// transport.
public enum MailTransportConfig: Sendable, Hashable, CustomStringConvertible {
    /// An SMTP relay.
    case smtp(SMTPEndpoint)
    /// One `.eml` file per message in this directory: the embedded default, `./mail-out`.
    case directory(String)
    /// A signed JSON POST per message to the operator's own code or a provider adapter.
    case http(HTTPMailEndpoint)

    /// The directory used when no `--smtp-url` is set.
    public static let defaultDirectory = "./mail-out"

    /// The transport for these settings.
    ///
    /// - Parameters:
    ///   - url: `smtp://[user[:pass]@]host[:port][/ehlo-name]` (STARTTLS required, port 587),
    ///     `smtps://…` (implicit TLS, port 465), `smtp+plain://…` (no TLS, port 25), or `file:DIR`;
    ///     nil means `file:./mail-out`. User and password are percent-decoded.
    ///   - caFile: extra CA certificates for TLS.
    ///   - passwordFile: where to read the password instead of the URL.
    /// - Throws: ``MailTransportConfigError`` naming what is wrong (unknown scheme, missing host,
    ///   bad port, a password both in the URL and in a file, …); it never repeats the password.
    ///   - signingSecretFile: the `whsec_` secrets an `https://` or `http://` transport signs with.
    public static func parse(
        url: String?, caFile: String? = nil, passwordFile: String? = nil, signingSecretFile: String? = nil
    ) throws(MailTransportConfigError) -> MailTransportConfig {
        guard let url else {
            if passwordFile != nil { throw .init("--smtp-password-file needs an smtp://, smtps:// or smtp+plain:// --smtp-url") }
            if caFile != nil { throw .init("--smtp-ca-file needs an smtp:// or smtps:// --smtp-url") }
            if signingSecretFile != nil { throw .init("--mail-http-secret-file needs an https:// or http:// --smtp-url") }
            return .directory(defaultDirectory)
        }
        if url.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) {
            throw .init("the SMTP URL must not contain spaces or control characters")
        }
        let lowered = url.lowercased()
        if lowered.hasPrefix("https://") || lowered.hasPrefix("http://") {
            return .http(try HTTPMailEndpoint.parse(url: url, caFile: caFile, passwordFile: passwordFile, signingSecretFile: signingSecretFile))
        }
        if signingSecretFile != nil { throw .init("--mail-http-secret-file applies only to an https:// or http:// --smtp-url") }
        if url.hasPrefix("file:") {
            var path = String(url.dropFirst("file:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw .init("file: needs a directory, such as file:./mail-out") }
            if passwordFile != nil { throw .init("--smtp-password-file does not apply to a file: transport") }
            if caFile != nil { throw .init("--smtp-ca-file does not apply to a file: transport") }
            return .directory(path)
        }
        guard let separator = url.range(of: "://") else {
            throw .init("the SMTP URL must start with smtp://, smtps://, smtp+plain:// or file:")
        }
        let security: SMTPEndpoint.Security
        switch url[..<separator.lowerBound].lowercased() {
        case "smtp": security = .startTLS
        case "smtps": security = .implicitTLS
        case "smtp+plain": security = .none
        case let other:
            throw .init("unknown scheme \"\(other)\": use smtp:// (STARTTLS), smtps:// (TLS), smtp+plain:// (no TLS) or file:DIR")
        }
        let rest = url[separator.upperBound...]
        if rest.contains("?") || rest.contains("#") { throw .init("the SMTP URL must not have a query or a fragment") }
        let authority = rest.prefix { $0 != "/" }
        let heloName = String(rest.dropFirst(authority.count).drop { $0 == "/" })
        if heloName.contains("/") { throw .init("the SMTP URL's path may only be the name to greet the server with") }

        var username: String?
        var password: SMTPEndpoint.Password?
        var hostPort = authority[...]
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            let (user, pass) =
                userInfo.firstIndex(of: ":").map { (userInfo[..<$0], Optional(userInfo[userInfo.index(after: $0)...])) }
                ?? (userInfo, nil)
            guard let decodedUser = user.removingPercentEncodingForURL, !decodedUser.isEmpty else {
                throw .init("the SMTP URL's user name is empty or not UTF-8")
            }
            username = decodedUser
            if let pass {
                guard let decoded = pass.removingPercentEncodingForURL else {
                    throw .init("the SMTP URL's password is not UTF-8 once percent-decoded")
                }
                password = .inline(decoded)
            }
        }
        if let passwordFile {
            if password != nil {
                throw .init("the SMTP password is given both in the URL and in --smtp-password-file: keep one")
            }
            guard username != nil else {
                throw .init("--smtp-password-file needs a user name in the SMTP URL (smtp://user@host)")
            }
            password = .file(passwordFile)
        }

        let host: String
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw .init("the SMTP URL's IPv6 address lacks its ]") }
            host = String(hostPort[...close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .init("the SMTP URL has text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.firstIndex(of: ":") {
            host = String(hostPort[..<colon])
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = String(hostPort)
        }
        guard !host.isEmpty, host != "[]" else { throw .init("the SMTP URL has no host") }
        guard host.hasPrefix("[") || host.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-" || $0 == "_" })
        else { throw .init("the SMTP URL's host \"\(host)\" is not a host name or address") }
        var port = security.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw .init("the SMTP URL's port must be a number from 1 to 65535")
            }
            port = number
        }
        if caFile != nil && security == .none {
            throw .init("--smtp-ca-file needs TLS: use smtp:// (STARTTLS) or smtps://, not smtp+plain://")
        }
        return .smtp(
            SMTPEndpoint(
                security: security, host: host, port: port, username: username, password: password, caFile: caFile,
                heloName: heloName.isEmpty ? nil : heloName))
    }

    /// The transport as the delivery log names it: `smtp://host:587`, `smtps://…`,
    /// `smtp+plain://…`, `https://host` for an HTTP provider, or `file` (no user, no password,
    /// no directory, no path or query).
    public var logLabel: String {
        switch self {
        case .smtp(let endpoint):
            let scheme = switch endpoint.security {
            case .startTLS: "smtp"
            case .implicitTLS: "smtps"
            case .none: "smtp+plain"
            }
            return "\(scheme)://\(endpoint.host):\(endpoint.port)"
        case .directory: return "file"
        case .http(let endpoint):
            // Scheme and authority only: a path or query may carry a provider's token.
            let afterScheme = endpoint.url.range(of: "://").map { endpoint.url[$0.upperBound...] } ?? Substring(endpoint.url)
            let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
            let scheme = endpoint.url.lowercased().hasPrefix("https://") ? "https" : "http"
            return "\(scheme)://\(authority)"
        }
    }

    /// The transport without secrets, for logs: `smtp://user@host:587 (STARTTLS)`, `file:DIR`.
    public var description: String {
        switch self {
        case .smtp(let endpoint): endpoint.description
        case .directory(let path): "file:\(path)"
        case .http(let endpoint): endpoint.description
        }
    }
}

/// An HTTP mail provider: each message is POSTed as JSON, signed in the Standard Webhooks format
/// (`webhook-id` = the message's Message-ID without its angle brackets, the same on every retry, so a receiver can drop a
/// repeat), to the operator's own code or a provider adapter. The body:
/// `{"type":"mail.send","messageId":…,"from":…,"to":[…],"raw":"<base64 of the RFC 5322 message>"}`.
public struct HTTPMailEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Where to POST.
    public let url: String
    /// Extra CA certificates (PEM) to trust for an https URL.
    public let caFile: String?
    /// The file of `whsec_` secrets, one a line (several while one rotates): each POST is signed with all.
    public let signingSecretFile: String
    /// Seconds one POST may take, connecting included (under half the outbox lease).
    public var timeout: Int = 30

    /// Checks an `https://` or `http://` URL and the files it needs.
    /// - Throws: ``MailTransportConfigError`` naming what is wrong; never the URL's user info.
    static func parse(url: String, caFile: String?, passwordFile: String?, signingSecretFile: String?) throws(MailTransportConfigError)
        -> HTTPMailEndpoint
    {
        let secure = url.lowercased().hasPrefix("https://")
        let rest = url.dropFirst(secure ? "https://".count : "http://".count)
        let authority = ProviderURL.authority(of: url)
        if authority.contains("@") {
            throw .init("the mail provider URL must not carry credentials: the POSTs are signed with --mail-http-secret-file")
        }
        if rest.contains("#") { throw .init("the mail provider URL must not have a fragment") }
        guard !authority.isEmpty, !authority.hasPrefix(":") else { throw .init("the mail provider URL has no host") }
        guard url.count <= 2000 else { throw .init("the mail provider URL is longer than 2000 characters") }
        if passwordFile != nil { throw .init("--smtp-password-file does not apply to an HTTP mail provider: use --mail-http-secret-file") }
        if caFile != nil && !secure { throw .init("--smtp-ca-file needs an https:// mail provider URL") }
        guard let signingSecretFile, !signingSecretFile.isEmpty else {
            throw .init("an HTTP mail provider needs --mail-http-secret-file (whsec_… secrets, one a line) to sign its POSTs")
        }
        return HTTPMailEndpoint(url: url, caFile: caFile, signingSecretFile: signingSecretFile)
    }

    /// Creates an endpoint.
    public init(url: String, caFile: String? = nil, signingSecretFile: String) {
        self.url = url
        self.caFile = caFile
        self.signingSecretFile = signingSecretFile
    }

    /// The URL up to its path (no query, which may hold a provider's token), for logs.
    public var description: String {
        "\(ProviderURL.forLog(url)) (signed JSON POST)"
    }
}

/// An SMTP relay: where, how secured, and whose credentials.
public struct SMTPEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is protected.
    public enum Security: Sendable, Hashable {
        /// Plain connect, then STARTTLS; refused when the server does not offer it (`smtp://`).
        case startTLS
        /// TLS from the first byte (`smtps://`).
        case implicitTLS
        /// No TLS at all (`smtp+plain://`): a relay on the same host or a private network.
        case none

        /// 587, 465 or 25.
        public var defaultPort: Int {
            switch self {
            case .startTLS: 587
            case .implicitTLS: 465
            case .none: 25
            }
        }
    }

    /// Where the password comes from.
    public enum Password: Sendable, Hashable {
        /// Given in the URL.
        case inline(String)
        /// Read from this file (its first line) when the transport is made.
        case file(String)
    }

    /// How the connection is protected.
    public let security: Security
    /// The host name, or an IPv6 address in brackets.
    public let host: String
    /// The port.
    public let port: Int
    /// The AUTH user name, if any.
    public let username: String?
    /// The AUTH password, if any.
    public let password: Password?
    /// Extra CA certificates (PEM) to trust.
    public let caFile: String?
    /// The name to greet the server with (EHLO), if not the default.
    public let heloName: String?
    /// Seconds to wait for a connection (and TLS handshake).
    public var connectTimeout: Int = 10
    /// Seconds to wait for each server reply.
    public var responseTimeout: Int = 30
    /// Seconds one message may take in all. Must stay under half the outbox lease
    /// (``DeliveryPolicy/lease``), so a send never outlives the claim it runs under.
    public var totalTimeout: Int = 60
    /// Seconds an unused connection is kept for reuse; older ones are re-opened.
    public var idleTimeout: Int = 30

    /// Creates an endpoint.
    public init(
        security: Security, host: String, port: Int, username: String? = nil, password: Password? = nil,
        caFile: String? = nil, heloName: String? = nil
    ) {
        self.security = security
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.caFile = caFile
        self.heloName = heloName
    }

    /// The URL for libcurl: `smtp://` for STARTTLS and for no TLS, `smtps://` for implicit TLS; no
    /// credentials in it.
    public var curlURL: String {
        let scheme = security == .implicitTLS ? "smtps" : "smtp"
        return "\(scheme)://\(host):\(port)" + (heloName.map { "/\($0)" } ?? "")
    }

    /// `smtp://user@host:587 (STARTTLS)`, without the password.
    public var description: String {
        let scheme: String
        let mode: String
        switch security {
        case .startTLS: (scheme, mode) = ("smtp", "STARTTLS")
        case .implicitTLS: (scheme, mode) = ("smtps", "TLS")
        case .none: (scheme, mode) = ("smtp+plain", "no TLS")
        }
        let user = username.map { "\($0)@" } ?? ""
        return "\(scheme)://\(user)\(host):\(port) (\(mode))"
    }
}

/// A `--smtp-url` that cannot be used; the message says what to fix and never holds the password.
public struct MailTransportConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence for the operator.
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension Substring {
    /// Percent-decoded (the one decoder, ``PercentDecoding``), or nil when not UTF-8 afterwards.
    fileprivate var removingPercentEncodingForURL: String? { PercentDecoding.decode(self) }
}
