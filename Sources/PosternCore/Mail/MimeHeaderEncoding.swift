/// Header text for RFC 5322 / RFC 2047: folding, encoded words, display-name phrases.
enum MimeHeaderEncoding {
    /// The line length folding aims for (RFC 5322 §2.1.1), CRLF not counted.
    static let lineLimit = 78
    /// The longest an encoded word may be (RFC 2047 §2).
    static let encodedWordLimit = 75

    /// `name: tokens…` with one space between tokens, folded before a token that would pass
    /// ``lineLimit``, ending in CRLF. A token longer than a line stays whole on its own line.
    static func header(_ name: String, tokens: [String]) -> String {
        var out = ""
        var line = name + ":"
        var lineHasToken = false
        for token in tokens {
            if lineHasToken && line.utf8.count + 1 + token.utf8.count > lineLimit {
                out += line + "\r\n"
                line = ""
            }
            line += " " + token
            lineHasToken = true
        }
        return out + line + "\r\n"
    }

    /// Whether `bytes` hold "=?", which a reader could take for the start of an encoded word.
    /// Compared as bytes: `String.contains` of a string went through Foundation's `range(of:)`
    /// (1.4 % of an outbox worker's time in a drain, with the envelope check beside it).
    static func startsEncodedWord<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: "=") && $1 == UInt8(ascii: "?") }
    }

    /// Tokens of an unstructured value (Subject): the words as they are when the value is plain
    /// ASCII that folds well, else RFC 2047 Q encoded words covering all of it.
    static func unstructuredTokens(_ value: String, headerName: String) -> [String] {
        let firstLineRoom = lineLimit - headerName.utf8.count - 2
        let utf8 = value.utf8
        let ascii =
            !value.isEmpty && utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
            && !startsEncodedWord(utf8) && utf8.first != UInt8(ascii: " ") && utf8.last != UInt8(ascii: " ")
        guard ascii else { return encodedWords(value, firstLimit: firstLineRoom) }
        // One line as it is (most subjects): the same header as its words, without splitting them.
        if utf8.count <= firstLineRoom { return [value] }
        let words = value.split(separator: " ", omittingEmptySubsequences: false)
        guard words.allSatisfy({ $0.utf8.count <= firstLineRoom }) else { return encodedWords(value, firstLimit: firstLineRoom) }
        return words.map(String.init)
    }

    /// Tokens of a display name: atoms when it is plain ASCII words, a quoted string when it is
    /// ASCII with specials, else its atom-safe words as atoms and each run of the other words as
    /// encoded words. Keeping real spaces outside encoded words matters: RFC 2047 drops the
    /// whitespace between two encoded words, but some parsers (Python's `email`) keep it in phrases.
    static func phraseTokens(_ name: String, headerName: String) -> [String] {
        let firstLineRoom = lineLimit - headerName.utf8.count - 2
        let words = name.split(separator: " ", omittingEmptySubsequences: false)
        func isAtom(_ word: Substring) -> Bool {
            !word.isEmpty && word.utf8.allSatisfy(isAtext) && !startsEncodedWord(word.utf8) && word.utf8.count <= firstLineRoom
        }
        if name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            if words.allSatisfy(isAtom) { return words.map(String.init) }
            var quoted = "\""
            for character in name {
                if character == "\"" || character == "\\" { quoted.append("\\") }
                quoted.append(character)
            }
            quoted.append("\"")
            if quoted.utf8.count <= firstLineRoom { return [quoted] }
        }
        guard !words.contains(where: \.isEmpty) else { return encodedWords(name, firstLimit: firstLineRoom) }
        var tokens: [String] = []
        var run: [Substring] = []
        func flushRun() {
            guard !run.isEmpty else { return }
            tokens += encodedWords(run.joined(separator: " "), firstLimit: tokens.isEmpty ? firstLineRoom : encodedWordLimit)
            run = []
        }
        for word in words {
            if isAtom(word) {
                flushRun()
                tokens.append(String(word))
            } else {
                run.append(word)
            }
        }
        flushRun()
        return tokens
    }

    /// `text` as `=?utf-8?q?…?=` words, none longer than ``encodedWordLimit`` (the first no
    /// longer than `firstLimit`), never splitting a character's bytes across words. Spaces are
    /// inside the words (as `_`), since whitespace between encoded words is not part of the text.
    static func encodedWords(_ text: String, firstLimit: Int) -> [String] {
        let prefix = "=?utf-8?q?"
        let suffix = "?="
        let overhead = prefix.utf8.count + suffix.utf8.count
        var words: [String] = []
        var payload = ""
        var limit = min(firstLimit, encodedWordLimit) - overhead
        for scalar in text.unicodeScalars {
            var encoded = ""
            for byte in String(scalar).utf8 {
                if byte == UInt8(ascii: " ") {
                    encoded.append("_")
                } else if isQSafe(byte) {
                    encoded.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    encoded.append("=")
                    encoded.append(hexDigit(byte >> 4))
                    encoded.append(hexDigit(byte & 0x0F))
                }
            }
            if !payload.isEmpty && payload.utf8.count + encoded.utf8.count > limit {
                words.append(prefix + payload + suffix)
                payload = ""
                limit = encodedWordLimit - overhead
            }
            payload += encoded
        }
        words.append(prefix + payload + suffix)
        return words
    }

    /// Characters allowed unencoded in a Q word inside a phrase (RFC 2047 §5 (3)).
    private static func isQSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "!"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// RFC 5322 atext.
    private static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }

    static func hexDigit(_ nibble: UInt8) -> Character {
        Character(Unicode.Scalar(nibble < 10 ? nibble + 0x30 : nibble + 0x37))
    }
}
