import Foundation

/// A report about a message Postern sent, as mail brings it back: a delivery status notification
/// (RFC 3464, `multipart/report; report-type=delivery-status`) or an abuse report (RFC 5965,
/// `report-type=feedback-report`). Parsed from the raw message (an mbox `From ` line first is
/// skipped); only what matching and recording need is kept.
public struct DeliveryReport: Sendable, Hashable {
    /// Which kind of report.
    public enum Kind: String, Sendable, Hashable {
        /// RFC 3464: a relay's word on one or more recipients.
        case deliveryStatus = "delivery-status"
        /// RFC 5965: a recipient (or their provider) reported the message as abuse.
        case feedback = "feedback-report"
    }

    /// One recipient's fields of a delivery status notification.
    public struct Recipient: Sendable, Hashable {
        /// `failed`, `delayed`, `delivered`, `relayed` or `expanded` (lowercased).
        public let action: String
        /// The enhanced status code, `5.1.1`.
        public let status: String?
        /// The remote server's words (`Diagnostic-Code` without its type), cleaned to one line.
        public let diagnostic: String?

        /// True for a permanent failure: `failed`, and a status that is not 4.x.x.
        public var isPermanentFailure: Bool { action == "failed" && !(status?.hasPrefix("4") ?? false) }
        /// True for a delay or a soft failure: `delayed`, or a 4.x.x status.
        public var isTransient: Bool { action == "delayed" || (status?.hasPrefix("4") ?? false) }
    }

    /// Which kind.
    public let kind: Kind
    /// The per-recipient fields (delivery status notifications).
    public let recipients: [Recipient]
    /// The `Feedback-Type` of an abuse report (`abuse`, `fraud`, …), lowercased.
    public let feedbackType: String?
    /// Addresses the report may name as the original's reverse path, most telling first: the
    /// report's own `X-Original-To`, `Delivered-To` and `To` (a notification is sent to the reverse
    /// path), the status part's `X-Postfix-Sender` / `Original-Envelope-Id`, and the returned
    /// message's `Return-Path` (how an abuse report, sent to an abuse desk, still names it).
    public let reversePathCandidates: [String]

    /// The largest report taken in: a notification with the whole returned message is a few
    /// times the message itself, and Postern's mails are a few kB.
    public static let maximumSize = 1 << 20

    /// Parses `raw`.
    /// - Throws: ``DeliveryReportError`` when it is not a report (or is malformed); never echoes it.
    public static func parse(_ raw: [UInt8]) throws(DeliveryReportError) -> DeliveryReport {
        guard raw.count <= maximumSize else { throw .tooLarge }
        var text = String(decoding: raw, as: UTF8.self)
        if text.hasPrefix("From ") {
            text = text.firstIndex(of: "\n").map { String(text[text.index(after: $0)...]) } ?? ""
        }
        let message = MIMEEntity(text)
        guard let contentType = message.contentType, contentType.value == "multipart/report" else { throw .notAReport }
        guard let boundary = contentType.parameters["boundary"], !boundary.isEmpty else { throw .malformed("the report has no boundary") }
        let reportType = contentType.parameters["report-type"]?.lowercased()
        let kind: Kind
        switch reportType {
        case "delivery-status": kind = .deliveryStatus
        case "feedback-report": kind = .feedback
        default: throw .notAReport
        }
        let parts = message.parts(boundary: boundary)
        guard !parts.isEmpty else { throw .malformed("the report has no parts") }
        var candidates = ["x-original-to", "delivered-to", "to"].flatMap { message.headers($0) }
        var recipients: [Recipient] = []
        var feedbackType: String?
        for part in parts {
            let type = part.contentType?.value ?? "text/plain"
            switch type {
            case "message/delivery-status", "message/global-delivery-status":
                let groups = Self.fieldGroups(part.decodedBody)
                guard let perMessage = groups.first else { throw .malformed("the delivery status is empty") }
                candidates += (perMessage["x-postfix-sender"] ?? []).map(Self.typedValue)
                candidates += (perMessage["original-envelope-id"] ?? [])
                for fields in groups.dropFirst() {
                    guard let action = fields["action"]?.first?.lowercased() else { continue }
                    recipients.append(
                        Recipient(
                            action: action, status: fields["status"]?.first.map { String($0.prefix { !$0.isWhitespace }) },
                            diagnostic: fields["diagnostic-code"]?.first.map { Self.oneLine(Self.typedValue($0)) }))
                }
            case "message/feedback-report":
                let groups = Self.fieldGroups(part.decodedBody)
                feedbackType = groups.first?["feedback-type"]?.first?.lowercased()
            case "message/rfc822", "text/rfc822-headers", "message/rfc822-headers", "message/global", "message/global-headers":
                candidates += MIMEEntity(part.decodedBody).headers("return-path")
            default:
                continue
            }
        }
        if kind == .deliveryStatus, recipients.isEmpty { throw .malformed("the delivery status names no recipient") }
        if kind == .feedback, feedbackType == nil { throw .malformed("the abuse report has no Feedback-Type") }
        return DeliveryReport(kind: kind, recipients: recipients, feedbackType: feedbackType, reversePathCandidates: candidates)
    }

    /// `rfc822; a@b` → `a@b`; `smtp; 550 5.1.1 no` → `550 5.1.1 no`.
    static func typedValue(_ value: String) -> String {
        guard let semicolon = value.firstIndex(of: ";") else { return value }
        return value[value.index(after: semicolon)...].trimmingCharacters(in: .whitespaces)
    }

    /// Control characters out, whitespace runs folded, at most 300 characters.
    static func oneLine(_ text: String) -> String {
        let cleaned = text.unicodeScalars.map { ControlCharacters.isControl($0) ? " " : Character($0) }
        let folded = String(cleaned).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return folded.count > 300 ? String(folded.prefix(299)) + "…" : folded
    }

    /// The groups of `Name: value` fields separated by blank lines (RFC 3464 §2.1), folded lines
    /// unfolded, names lowercased.
    static func fieldGroups(_ body: String) -> [[String: [String]]] {
        var groups: [[String: [String]]] = []
        var current: [String: [String]] = [:]
        for field in MIMEEntity.unfoldedLines(body) {
            if field.isEmpty {
                if !current.isEmpty { groups.append(current) }
                current = [:]
                continue
            }
            guard let colon = field.firstIndex(of: ":") else { continue }
            let name = field[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            current[name, default: []].append(field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }
}

/// Why a message is not a report Postern can take in.
public enum DeliveryReportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not `multipart/report` with a delivery-status or feedback-report type.
    case notAReport
    /// A report, but broken in the way named.
    case malformed(String)
    /// Larger than ``DeliveryReport/maximumSize``.
    case tooLarge

    public var description: String {
        switch self {
        case .notAReport: "not a delivery report: expected multipart/report with report-type delivery-status (RFC 3464) or feedback-report (RFC 5965)"
        case .malformed(let what): "a malformed report: \(what)"
        case .tooLarge: "the report is larger than \(DeliveryReport.maximumSize / 1024) KiB"
        }
    }
}

/// One MIME entity: its header fields and its body, enough to walk a report (RFC 2045/2046).
struct MIMEEntity {
    struct ContentType {
        /// `type/subtype`, lowercased.
        let value: String
        /// Parameters with lowercased names, quotes removed.
        let parameters: [String: String]
    }

    private let fields: [(name: String, value: String)]
    /// The body as sent (transfer encoding not undone).
    let body: String

    init(_ text: String) {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let split = normalized.range(of: "\n\n")
        let head = split.map { String(normalized[..<$0.lowerBound]) } ?? normalized
        body = split.map { String(normalized[$0.upperBound...]) } ?? ""
        fields = Self.unfoldedLines(head).compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].trimmingCharacters(in: .whitespaces).lowercased(),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// Lines with continuation lines (starting with space or tab) joined to the one before.
    static func unfoldedLines(_ text: String) -> [String] {
        var lines: [String] = []
        for raw in text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false) {
            if let first = raw.first, first == " " || first == "\t", !lines.isEmpty, !lines[lines.count - 1].isEmpty {
                lines[lines.count - 1] += " " + raw.trimmingCharacters(in: .whitespaces)
            } else {
                lines.append(String(raw))
            }
        }
        return lines
    }

    /// The values of every field `name` (lowercase).
    func headers(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

    var contentType: ContentType? {
        guard let field = headers("content-type").first else { return nil }
        var pieces = Self.splitParameters(field)
        guard !pieces.isEmpty else { return nil }
        let value = pieces.removeFirst().trimmingCharacters(in: .whitespaces).lowercased()
        var parameters: [String: String] = [:]
        for piece in pieces {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var raw = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if raw.count >= 2, raw.hasPrefix("\""), raw.hasSuffix("\"") { raw = String(raw.dropFirst().dropLast()) }
            parameters[name] = raw
        }
        return ContentType(value: value, parameters: parameters)
    }

    /// Splits at `;` outside quotes.
    private static func splitParameters(_ field: String) -> [String] {
        var pieces: [String] = []
        var current = ""
        var quoted = false
        for character in field {
            if character == "\"" { quoted.toggle() }
            if character == ";" && !quoted {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        return pieces
    }

    /// The body parts between `--boundary` lines (the preamble and epilogue dropped).
    func parts(boundary: String) -> [MIMEEntity] {
        let delimiter = "--" + boundary
        var parts: [MIMEEntity] = []
        var current: [Substring]?
        for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.hasSuffix(" ") || line.hasSuffix("\t") ? Substring(line.trimmingCharacters(in: .whitespaces)) : line
            if trimmed == delimiter || trimmed == delimiter + "--" {
                if let current { parts.append(MIMEEntity(current.joined(separator: "\n"))) }
                current = trimmed == delimiter ? [] : nil
                if trimmed != delimiter { break }
                continue
            }
            current?.append(line)
        }
        return parts
    }

    /// The body with its transfer encoding (base64, quoted-printable) undone.
    var decodedBody: String {
        switch headers("content-transfer-encoding").first?.lowercased() {
        case "base64":
            let compact = body.filter { !$0.isWhitespace }
            return Data(base64Encoded: compact).map { String(decoding: $0, as: UTF8.self) } ?? body
        case "quoted-printable":
            // The one decoder of quoted-printable (the pasted-link reader uses it too).
            return String(decoding: QuotedPrintableDebris.decode(Array(body.utf8)), as: UTF8.self)
        default:
            return body
        }
    }
}
