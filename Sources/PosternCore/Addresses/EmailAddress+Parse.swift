import Foundation
import PosternAPI
import PosternIDNA

extension EmailAddress {
    /// Longest address accepted, in octets (RFC 5321 path limit less the angle brackets).
    public static let maximumLength = WireLimits.emailMaximumLength

    /// Parses and normalizes what a user typed.
    ///
    /// Surrounding spaces are trimmed; the domain is lower-cased, NFC-normalized and IDNA-encoded;
    /// the local part is kept as given. Refused: control and invisible characters (CR/LF header
    /// injection), a missing or second `@`, display names and angle brackets, non-ASCII local parts,
    /// address literals, and anything over 254 octets.
    /// - Throws: `EmailAddressError` naming what is wrong.
    public static func parse(_ input: String) throws(EmailAddressError) -> EmailAddress {
        if let address = try parseASCII(input) { return address }
        return try parseUnicode(input)
    }

    /// The general parser: any input, Unicode tables and Foundation's NFC.
    static func parseUnicode(_ input: String) throws(EmailAddressError) -> EmailAddress {
        for scalar in input.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control: if scalar != "\t" { throw EmailAddressError(.controlCharacter) }
            case .format, .lineSeparator, .paragraphSeparator: throw EmailAddressError(.invisibleCharacter)
            default: break
            }
        }
        let text = input.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw EmailAddressError(.empty) }
        let scalars = Array(text.unicodeScalars)

        // The local part: a quoted string or a dot-atom, ending at the first @ outside quotes.
        var index = 0
        var local = ""
        if scalars[0] == "\"" {
            // The quoted string's content, its escapes undone.
            var content = ""
            index = 1
            var closed = false
            while index < scalars.count {
                let c = scalars[index]
                guard c.isASCII else { throw EmailAddressError(.nonASCIILocalPart) }
                index += 1
                if c == "\\" {
                    guard index < scalars.count, scalars[index].isASCII, scalars[index].value >= 32 else {
                        throw EmailAddressError(.unterminatedQuote)
                    }
                    content.unicodeScalars.append(scalars[index])
                    index += 1
                } else if c == "\"" {
                    closed = true
                    break
                } else {
                    content.unicodeScalars.append(c)
                }
            }
            guard closed else { throw EmailAddressError(.unterminatedQuote) }
            guard index < scalars.count else { throw EmailAddressError(.missingAt) }
            guard scalars[index] == "@" else { throw EmailAddressError(.displayName) }
            guard !content.isEmpty else { throw EmailAddressError(.emptyLocalPart) }
            local = canonicalLocalPart(quotedContent: content)
        } else {
            while index < scalars.count, scalars[index] != "@" {
                local.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard index < scalars.count else {
                throw EmailAddressError(text.contains("<") || text.contains(" ") ? .displayName : .missingAt)
            }
            try checkDotAtom(ArraySlice(local.utf8))
        }
        let domainText = String(String.UnicodeScalarView(scalars[(index + 1)...]))
        if domainText.contains(where: { $0 == " " || $0 == "<" || $0 == ">" || $0 == "," || $0 == ";" }) {
            throw EmailAddressError(.displayName)
        }
        if domainText.utf8.contains(UInt8(ascii: "@")) { throw EmailAddressError(.multipleAt) }
        guard local.utf8.count <= 64 else { throw EmailAddressError(.localPartTooLong) }
        let domain = try encodeDomain(domainText)
        guard local.utf8.count + 1 + domain.utf8.count <= maximumLength else { throw EmailAddressError(.tooLong) }
        return EmailAddress(checkedLocalPart: local, domain: domain)
    }

    /// A quoted local part, given by its content (escapes undone), in the one form each mailbox has
    /// (RFC 5321 4.1.2: a quoted string and its content are the same mailbox): the content as a
    /// dot-atom when it is one (`"bob"` is `bob`), else quoted with only `"` and `\` escaped
    /// (`"a\ b"` is `"a b"`). Otherwise each needless quote or backslash made another key for one
    /// mailbox: another account, and another per-address mail limit, without end (`"b\ob"`, …).
    static func canonicalLocalPart(quotedContent content: String) -> String {
        if (try? checkDotAtom(ArraySlice(content.utf8))) != nil { return content }
        var requoted = "\""
        for c in content.unicodeScalars {
            if c == "\"" || c == "\\" { requoted.unicodeScalars.append("\\") }
            requoted.unicodeScalars.append(c)
        }
        return requoted + "\""
    }

    private static let atomSpecials = Set("!#$%&'*+-/=?^_`{|}~".unicodeScalars)

    /// Lower-cases and IDNA-encodes a domain (UTS #46 mapping and IDNA2008 validity through
    /// libidn2, for a name that is not ASCII); checks LDH labels and lengths.
    static func encodeDomain(_ text: String) throws(EmailAddressError) -> String {
        guard !text.isEmpty else { throw EmailAddressError(.emptyDomain) }
        if text.hasPrefix("[") { throw EmailAddressError(.addressLiteral) }
        if text.contains(where: { $0 == " " || $0 == "<" || $0 == ">" || $0 == "," || $0 == ";" }) {
            throw EmailAddressError(.displayName)
        }
        let ascii: String
        if text.unicodeScalars.allSatisfy(\.isASCII) {
            ascii = text.lowercased()
        } else {
            // An empty label stays an error of ours (libidn2 would drop a trailing dot).
            let stops: Set<Unicode.Scalar> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
            let scalars = Array(text.unicodeScalars)
            if stops.contains(scalars[0]) || stops.contains(scalars[scalars.count - 1]) { throw EmailAddressError(.invalidDomain) }
            guard let encoded = IDNA.toASCII(text) else { throw EmailAddressError(.invalidDomain) }
            ascii = encoded.lowercased()
        }
        var labels: [String] = []
        for label in ascii.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, isHostLabel(label.utf8) else { throw EmailAddressError(.invalidDomain) }
            labels.append(String(label))
        }
        if let last = labels.last, isNumeric(last.utf8) { throw EmailAddressError(.addressLiteral) }
        let domain = labels.joined(separator: ".")
        guard domain.utf8.count <= 253 else { throw EmailAddressError(.domainTooLong) }
        return domain
    }

    /// The same rules, in the same order, for ASCII input without a quoted local part: nearly
    /// every address, on a request's hot path, read byte by byte with no Unicode tables. Nil when
    /// the input needs ``parseUnicode(_:)`` (non-ASCII bytes, or a quoted local part).
    static func parseASCII(_ input: String) throws(EmailAddressError) -> EmailAddress? {
        let bytes = Array(input.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        if bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { throw EmailAddressError(.controlCharacter) }
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let start = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            throw EmailAddressError(.empty)
        }
        let text = bytes[start...last]
        guard text.first != UInt8(ascii: "\"") else { return nil }
        guard let at = text.firstIndex(of: UInt8(ascii: "@")) else {
            throw EmailAddressError(text.contains(UInt8(ascii: "<")) || text.contains(0x20) ? .displayName : .missingAt)
        }
        let local = text[..<at]
        try checkDotAtom(local)
        let domain = text[(at + 1)...]
        let breaksName: (UInt8) -> Bool = { [0x20, 0x3C, 0x3E, 0x2C, 0x3B].contains($0) }  // space < > , ;
        if domain.contains(where: breaksName) { throw EmailAddressError(.displayName) }
        if domain.contains(UInt8(ascii: "@")) { throw EmailAddressError(.multipleAt) }
        guard local.count <= 64 else { throw EmailAddressError(.localPartTooLong) }

        guard !domain.isEmpty else { throw EmailAddressError(.emptyDomain) }
        if domain.first == UInt8(ascii: "[") { throw EmailAddressError(.addressLiteral) }
        let lowered = domain.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        var lastLabel: ArraySlice<UInt8> = []
        for label in lowered.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard isHostLabel(label) else { throw EmailAddressError(.invalidDomain) }
            lastLabel = label
        }
        if isNumeric(lastLabel) { throw EmailAddressError(.addressLiteral) }
        guard lowered.count <= 253 else { throw EmailAddressError(.domainTooLong) }
        guard local.count + 1 + lowered.count <= maximumLength else { throw EmailAddressError(.tooLong) }
        return EmailAddress(checkedLocalPart: String(decoding: local, as: UTF8.self), domain: String(decoding: lowered, as: UTF8.self))
    }

    /// A dot-atom local part (RFC 5322), as UTF-8: characters that belong to a display name or a
    /// list are `displayName`, anything not ASCII `nonASCIILocalPart`, the rest `invalidLocalPart`.
    private static func checkDotAtom(_ local: ArraySlice<UInt8>) throws(EmailAddressError) {
        guard !local.isEmpty else { throw EmailAddressError(.emptyLocalPart) }
        var previousDot = true
        for c in local {
            // < > space , ; : " tab
            if c == 0x3C || c == 0x3E || c == 0x20 || c == 0x2C || c == 0x3B || c == 0x3A || c == 0x22 || c == 0x09 {
                throw EmailAddressError(.displayName)
            }
            guard c < 0x80 else { throw EmailAddressError(.nonASCIILocalPart) }
            if c == UInt8(ascii: ".") {
                if previousDot { throw EmailAddressError(.invalidLocalPart) }
                previousDot = true
                continue
            }
            previousDot = false
            let alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
            guard alnum || atomSpecials.contains(Unicode.Scalar(c)) else { throw EmailAddressError(.invalidLocalPart) }
        }
        if previousDot { throw EmailAddressError(.invalidLocalPart) }
    }

    /// An ASCII host-name label: 1 to 63 of `a-z 0-9 -` (already lower-cased), no hyphen at either end.
    private static func isHostLabel(_ label: some BidirectionalCollection<UInt8>) -> Bool {
        !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
            && label.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
    }

    /// All digits: a last label like that makes the domain an address literal in disguise.
    private static func isNumeric(_ label: some Collection<UInt8>) -> Bool { label.allSatisfy { $0 >= 48 && $0 <= 57 } }
}
