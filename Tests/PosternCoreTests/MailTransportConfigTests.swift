import PosternCore
import Testing

@Suite("SMTP URL parsing")
struct MailTransportConfigTests {
    func endpoint(_ url: String, ca: String? = nil, passwordFile: String? = nil) throws -> SMTPEndpoint {
        guard case .smtp(let endpoint) = try MailTransportConfig.parse(url: url, caFile: ca, passwordFile: passwordFile) else {
            throw MailTransportConfigTestFailure()
        }
        return endpoint
    }

    func message(_ url: String?, ca: String? = nil, passwordFile: String? = nil) -> String? {
        do {
            _ = try MailTransportConfig.parse(url: url, caFile: ca, passwordFile: passwordFile)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("no URL means .eml files in ./mail-out; file:DIR names the directory")
    func directory() throws {
        #expect(try MailTransportConfig.parse(url: nil) == .directory("./mail-out"))
        #expect(try MailTransportConfig.parse(url: "file:/var/spool/postern") == .directory("/var/spool/postern"))
        #expect(try MailTransportConfig.parse(url: "file:///tmp/out") == .directory("/tmp/out"))
        #expect(message("file:")?.contains("directory") == true)
    }

    @Test("schemes choose the security and the default port; curl sees smtp:// for smtp+plain")
    func schemes() throws {
        let starttls = try endpoint("smtp://relay.example.com")
        #expect(starttls.security == .startTLS && starttls.port == 587 && starttls.curlURL == "smtp://relay.example.com:587")
        let tls = try endpoint("smtps://relay.example.com")
        #expect(tls.security == .implicitTLS && tls.port == 465 && tls.curlURL == "smtps://relay.example.com:465")
        let plain = try endpoint("SMTP+PLAIN://127.0.0.1:2525")
        #expect(plain.security == SMTPEndpoint.Security.none && plain.port == 2525 && plain.curlURL == "smtp://127.0.0.1:2525")
        let v6 = try endpoint("smtp+plain://[::1]")
        #expect(v6.host == "[::1]" && v6.port == 25)
        #expect(try endpoint("smtp://relay.example.com/mail.example.org").curlURL == "smtp://relay.example.com:587/mail.example.org")
    }

    @Test("credentials come from the URL, percent-decoded, and never appear in the description")
    func credentials() throws {
        let e = try endpoint("smtp://me%40example.com:p%3Ass%20w@relay.example.com:2587")
        #expect(e.username == "me@example.com")
        #expect(e.password == .inline("p:ss w"))
        #expect(e.port == 2587)
        #expect(!e.description.contains("p:ss") && !e.curlURL.contains("me"))
        #expect(e.description == "smtp://me@example.com@relay.example.com:2587 (STARTTLS)")
        let user = try endpoint("smtps://me@relay.example.com", passwordFile: "/run/secrets/smtp")
        #expect(user.password == .file("/run/secrets/smtp"))
    }

    @Test("bad URLs get a sentence saying what to fix, without the password")
    func errors() {
        #expect(message("imap://host")?.contains("unknown scheme \"imap\"") == true)
        #expect(message("smtp://")?.contains("no host") == true)
        #expect(message("smtp://user:secret@")?.contains("no host") == true)
        #expect(message("smtp://host:0")?.contains("port") == true)
        #expect(message("smtp://host:99999")?.contains("port") == true)
        #expect(message("smtp://host:abc")?.contains("port") == true)
        #expect(message("smtp://host?x=1")?.contains("query") == true)
        #expect(message("smtp://ho st")?.contains("spaces") == true)
        #expect(message("smtp://host\r\nRCPT")?.contains("control") == true)
        #expect(message("relay.example.com")?.contains("must start with") == true)
        let both = message("smtp://u:topsecret@host", passwordFile: "/run/pw")
        #expect(both?.contains("both") == true)
        #expect(both?.contains("topsecret") == false)
        #expect(message("smtp://host", passwordFile: "/run/pw")?.contains("user name") == true)
        #expect(message("smtp+plain://host", ca: "/ca.pem")?.contains("needs TLS") == true)
        #expect(message("file:./out", ca: "/ca.pem") != nil)
        #expect(message(nil, passwordFile: "/run/pw") != nil)
        #expect(message("smtp://:pw@host")?.contains("user name") == true)
    }

    @Test("https:// and http:// choose an HTTP mail provider, which needs its signing secrets and takes no credentials")
    func httpProvider() throws {
        let parsed = try MailTransportConfig.parse(
            url: "https://mail.example.com/send?token=abc", caFile: "/etc/ca.pem", signingSecretFile: "/etc/postern/mail-http.secret")
        guard case .http(let endpoint) = parsed else { throw MailTransportConfigTestFailure() }
        #expect(endpoint.url == "https://mail.example.com/send?token=abc" && endpoint.caFile == "/etc/ca.pem")
        #expect(endpoint.signingSecretFile == "/etc/postern/mail-http.secret")
        // The log form keeps the query out: it may hold a provider's token.
        #expect(parsed.description == "https://mail.example.com/send?… (signed JSON POST)")
        #expect(try MailTransportConfig.parse(url: "HTTP://127.0.0.1:9000/mail", signingSecretFile: "s") != .directory("./mail-out"))
        func refusal(_ url: String?, ca: String? = nil, passwordFile: String? = nil, secret: String? = "s") -> String? {
            do {
                _ = try MailTransportConfig.parse(url: url, caFile: ca, passwordFile: passwordFile, signingSecretFile: secret)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(refusal("https://mail.example.com/send", secret: nil)?.contains("--mail-http-secret-file") == true)
        let credentials = refusal("https://user:hunter2@mail.example.com/send")
        #expect(credentials?.contains("credentials") == true && credentials?.contains("hunter2") == false)
        #expect(refusal("https:///send")?.contains("no host") == true)
        #expect(refusal("https://mail.example.com/#x")?.contains("fragment") == true)
        #expect(refusal("http://mail.example.com/send", ca: "/etc/ca.pem")?.contains("https://") == true)
        #expect(refusal("https://mail.example.com/send", passwordFile: "/p")?.contains("--mail-http-secret-file") == true)
        // The secret file belongs to an HTTP provider only.
        #expect(refusal("smtp://relay.example.com")?.contains("applies only") == true)
        #expect(refusal(nil)?.contains("needs an https://") == true)
        #expect(refusal("file:./mail-out")?.contains("applies only") == true)
    }
}

private struct MailTransportConfigTestFailure: Error {}
