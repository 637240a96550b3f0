import Foundation
@testable import PosternCore

/// Shared fixtures for the template and MIME tests.
enum MailFixtures {
    /// 2025-05-04 14:02:07 UTC, a Sunday.
    static let now = Date(timeIntervalSince1970: 1_746_367_327)

    static func address(_ local: String, _ domain: String = "example.com") -> EmailAddress {
        EmailAddress(checkedLocalPart: local, domain: domain)
    }

    static func mailbox(_ local: String, _ domain: String = "example.com", name: String? = nil) throws -> MailMailbox {
        try MailMailbox(address(local, domain), displayName: name)
    }

    /// The repository's `templates/` folder, found from this file's path (symlinks resolved, so
    /// the tests work from a scratch package that links this file).
    static var bundledTemplatesURL: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("templates", isDirectory: true)
    }

    /// The bundled templates as (name → source), read the way the loader in PosternMail does.
    static func bundledSources() throws -> [String: String] {
        let root = bundledTemplatesURL
        var sources: [String: String] = [:]
        for locale in try FileManager.default.contentsOfDirectory(atPath: root.path) {
            let folder = root.appendingPathComponent(locale, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue
            else { continue }
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !file.hasPrefix(".") {
                sources["\(locale)/\(file)"] = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            }
        }
        return sources
    }

    /// A complete, minimal template set for `locales`: each part names the locale and uses what it must.
    static func minimalSources(locales: [String] = ["en"]) -> [String: String] {
        var sources: [String: String] = [:]
        for locale in locales {
            for kind in MailMessageKind.allCases {
                let subjectVariable = kind == .signIn ? "code" : "requestedAt"
                sources["\(locale)/\(kind.rawValue).subject"] = "[\(locale)] \(kind.rawValue) {{\(subjectVariable)}}\n"
                let body = kind.requiredVariables(in: .text).sorted().map { "{{\($0.name)}}" }.joined(separator: " ")
                sources["\(locale)/\(kind.rawValue).txt"] = "[\(locale)] \(kind.rawValue) \(body)\n"
                sources["\(locale)/\(kind.rawValue).html"] = "<p>[\(locale)] \(kind.rawValue) \(body)</p>\n"
            }
        }
        // The fallback's words (the units of "expires in").
        sources["en/words.strings"] = MailWord.allCases.map { "\($0.rawValue) = \($0.rawValue.split(separator: ".")[0])\($0.rawValue.hasSuffix("other") ? "s" : "")" }
            .joined(separator: "\n")
        // And the hosted page's: each word its own key, for the tests that need a complete set.
        sources["en/page.strings"] = PageWord.allCases.map { "\($0.rawValue) = [\($0.rawValue)]" }.joined(separator: "\n")
        // And its templates: a layout and each page with what it must use.
        sources["en/\(PageKind.layoutFileName)"] = "<main>{{>content}}</main>\n"
        for kind in PageKind.allCases {
            sources["en/\(kind.fileName)"] = "<p>\(kind.rawValue) " + kind.requiredVariables.sorted().map { "{{\($0.name)}}" }.joined(separator: " ") + "</p>\n"
        }
        return sources
    }

    /// Decodes quoted-printable as a mail reader would: soft breaks removed, `=XX` decoded.
    static func decodeQuotedPrintable(_ encoded: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while index < encoded.count {
            let byte = encoded[index]
            if byte == UInt8(ascii: "=") {
                if index + 2 < encoded.count, encoded[index + 1] == UInt8(ascii: "\r"), encoded[index + 2] == UInt8(ascii: "\n") {
                    index += 3
                    continue
                }
                if index + 2 < encoded.count, let high = hex(encoded[index + 1]), let low = hex(encoded[index + 2]) {
                    out.append(high << 4 | low)
                    index += 3
                    continue
                }
            }
            out.append(byte)
            index += 1
        }
        return out
    }

    /// Decodes the RFC 2047 Q encoded words of an unfolded header value (whitespace between words dropped).
    static func decodeEncodedWords(_ value: String) -> String {
        let words = value.split(separator: " ")
        guard words.allSatisfy({ $0.hasPrefix("=?utf-8?q?") && $0.hasSuffix("?=") }) else { return value }
        var bytes: [UInt8] = []
        for word in words {
            let payload = Array(word.dropFirst(10).dropLast(2).utf8).map { $0 == UInt8(ascii: "_") ? UInt8(ascii: " ") : $0 }
            bytes += decodeQuotedPrintable(payload)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The header block of a message, unfolded, as (name, value) pairs in order.
    static func headers(of message: [UInt8]) -> [(String, String)] {
        let text = String(decoding: message, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return [] }
        let unfolded = text[..<end.lowerBound].replacingOccurrences(of: "\r\n ", with: " ")
        return unfolded.components(separatedBy: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
    }

    /// The lines of a message, split at CRLF.
    static func lines(of message: [UInt8]) -> [String] {
        String(decoding: message, as: UTF8.self).components(separatedBy: "\r\n")
    }
}
