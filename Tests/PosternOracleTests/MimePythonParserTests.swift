import Foundation
import Testing
@testable import PosternCore
import PosternMail

/// Reads built messages back with Python's `email` package (policy=default), an independent
/// RFC 5322/2045/2047 parser, and checks that every header and both parts decode to exactly what
/// was rendered. Needs `python3` on PATH; fails (does not skip) without it.
@Suite("MIME read back by Python's email parser")
struct MimePythonParserTests {
    private struct Parsed: Decodable {
        let defects: [String]
        let headers: [[String]]
        let fromName: String
        let fromAddress: String
        let toName: String
        let toAddress: String
        let subject: String
        let date: String
        let messageID: String
        let contentType: String
        let contentLanguage: String
        let autoSubmitted: String
        let parts: [Part]

        struct Part: Decodable {
            let contentType: String
            let charset: String
            let transferEncoding: String
            let content: String
        }
    }

    private static let script = #"""
        import base64, json, sys
        import email
        from email import policy
        out = []
        for raw in json.load(sys.stdin):
            msg = email.message_from_bytes(base64.b64decode(raw), policy=policy.default)
            parts = list(msg.iter_parts())
            frm, to = msg["From"].addresses[0], msg["To"].addresses[0]
            out.append({
                "defects": [repr(d) for d in msg.defects] + [repr(d) for p in parts for d in p.defects]
                    + [repr(d) for k, v in msg.items() for d in getattr(v, "defects", ())],
                "headers": [[k, str(v)] for k, v in msg.items()],
                "fromName": frm.display_name, "fromAddress": frm.addr_spec,
                "toName": to.display_name, "toAddress": to.addr_spec,
                "subject": str(msg["Subject"]),
                "date": msg["Date"].datetime.isoformat(),
                "messageID": str(msg["Message-ID"]),
                "contentType": msg.get_content_type(),
                "contentLanguage": str(msg["Content-Language"]),
                "autoSubmitted": str(msg["Auto-Submitted"]),
                "parts": [{"contentType": p.get_content_type(), "charset": p.get_content_charset(),
                           "transferEncoding": p["Content-Transfer-Encoding"], "content": p.get_content()} for p in parts],
            })
        json.dump(out, sys.stdout)
        """#

    /// Runs the script over `messages`; records an issue and returns nil when Python cannot run.
    private func parseWithPython(_ messages: [[UInt8]]) throws -> [Parsed]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            Issue.record("cannot start python3 through /usr/bin/env: \(error)")
            return nil
        }
        let payload = try JSONSerialization.data(withJSONObject: messages.map { Data($0).base64EncodedString() })
        // The script reads all of stdin before it writes, so writing first cannot deadlock.
        input.fileHandleForWriting.write(payload)
        try input.fileHandleForWriting.close()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            Issue.record("python3 failed (status \(process.terminationStatus); 127 means it is not on PATH): \(String(decoding: stderr, as: UTF8.self))")
            return nil
        }
        return try JSONDecoder().decode([Parsed].self, from: result)
    }

    /// 2025-05-04 14:02:07 UTC, a Sunday.
    static let now = Date(timeIntervalSince1970: 1_746_367_327)

    /// The repository's `templates/`, found from this file's path.
    static var bundledTemplates: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("templates", isDirectory: true)
    }

    private struct Built {
        let mime: MimeMessage
        let bytes: [UInt8]
    }

    private func build(_ rendered: RenderedMail, fromName: String?, toName: String?) throws -> Built {
        let mime = try MimeMessage(
            rendered, from: MailMailbox(try EmailAddress.parse("no-reply@mail.example.org"), displayName: fromName),
            to: MailMailbox(try EmailAddress.parse("jane.doe@example.com"), displayName: toName), date: Self.now,
            messageIDToken: "pyTest_0123456789")
        return Built(mime: mime, bytes: mime.bytes())
    }

    @Test func everyBundledMailAndAHostileOneReadBackExactly() throws {
        let renderer = try TemplateDirectory.load(Self.bundledTemplates)
            .renderer(branding: Branding(appName: "Postern", supportEmail: "help@example.com"))
        var built: [Built] = []
        for locale in ["en", "de"] {
            for kind in MailMessageKind.allCases {
                let rendered = renderer.render(MailMessage.sample(of: kind, now: Self.now), preferences: [locale], now: Self.now)
                built.append(try build(rendered, fromName: locale == "de" ? "Postern Bürgerservice" : "Postern", toName: "Jane Doe"))
            }
        }
        let hostile = RenderedMail(
            kind: .signIn, locale: "de",
            subject: "Grüße aus Köln: \"=?utf-8?q?x?=\" ünd ein sehr langer Betreff, der über mehrere Zeilen gefaltet werden muss 🚀 ß",
            text: "From here\n.\n..\ntrailing   \n\tTab=3D 100% \n" + String(repeating: "ä€🚀 ", count: 200) + "\nno final newline",
            html: "<p>\(String(repeating: "x", count: 2_000))</p>\r\n<p>ü</p>\n\n",
            )
        built.append(try build(hostile, fromName: "Doe, \"Postern\" Team", toName: "Jürgen Müller-Lüdenscheidt von und zu Ötzingen-Überlingen, Abteilung Straße"))
        built.append(try build(hostile, fromName: nil, toName: nil))

        let parsed = try #require(try parseWithPython(built.map(\.bytes)))
        #expect(parsed.count == built.count)
        for (mail, result) in zip(built, parsed) {
            let mime = mail.mime
            #expect(result.defects == [], "\(mime.subject)")
            #expect(result.headers.map { $0.first ?? "" } == [
                "Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Auto-Submitted", "X-Auto-Response-Suppress",
                "Content-Language", "Content-Type",
            ])
            #expect(result.subject == mime.subject)
            #expect(result.fromName == (mime.from.displayName ?? ""))
            #expect(result.fromAddress == "no-reply@mail.example.org")
            #expect(result.toName == (mime.to.displayName ?? ""))
            #expect(result.toAddress == "jane.doe@example.com")
            #expect(result.date == "2025-05-04T14:02:07+00:00")
            #expect(result.messageID == mime.messageID)
            #expect(result.contentType == "multipart/alternative")
            #expect(result.contentLanguage == mime.contentLanguage)
            #expect(result.autoSubmitted == "auto-generated")
            #expect(result.parts.map(\.contentType) == ["text/plain", "text/html"])
            #expect(result.parts.allSatisfy { $0.charset == "utf-8" && $0.transferEncoding == "quoted-printable" })
            // The wire form ends lines with CRLF; the rendered text ends them with LF.
            let canonical = { (text: String) in
                text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            }
            #expect(result.parts.first.map { canonical($0.content) } == canonical(mime.textBody))
            #expect(result.parts.last.map { canonical($0.content) } == canonical(mime.htmlBody))
        }
    }

    @Test("an app name with specials and umlauts reaches From and Subject intact: Python reads back exactly the name")
    func appNameInHeaders() throws {
        for name in ["A&B <Co>", "Zürich & Söhne, \"Beta\"", "Acme"] {
            var settings = Settings()
            settings.appName = name
            let renderer = try TemplateDirectory.load(Self.bundledTemplates).renderer(branding: settings.branding)
            let rendered = renderer.render(MailMessage.sample(of: .resetPassword, now: Self.now), preferences: ["en"], now: Self.now)
            #expect(rendered.subject.contains(name))
            let mime = try MimeMessage(
                rendered, from: settings.senderMailbox(), to: MailMailbox(try EmailAddress.parse("jane.doe@example.com")),
                date: Self.now, messageIDToken: "pyBrand_0123456789")
            let all = try #require(try parseWithPython([mime.bytes()]))
            let parsed = try #require(all.first)
            #expect(parsed.defects == [], "\(name)")
            #expect(parsed.fromName == name && parsed.fromAddress == "no-reply@localhost")
            #expect(parsed.subject == rendered.subject)
        }
    }
}
