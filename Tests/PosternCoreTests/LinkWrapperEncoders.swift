import PosternCrypto
import Foundation

/// Test-side encoders: what mail gateways and mail clients do to a link, written independently of
/// the parser so the property tests can check that the parser undoes each of them.
enum LinkWrapperEncoders {
    /// One way of rewriting a link.
    struct Wrapper: Sendable, CustomStringConvertible {
        let description: String
        let wrap: @Sendable (String) -> String
    }

    /// Every gateway the parser must unwrap.
    static let gateways: [Wrapper] = [
        Wrapper(description: "Safe Links") { inner in
            "https://nam12.safelinks.protection.outlook.com/?url=\(percentEncoded(inner))"
                + "&data=05%7C02%7Cuser%40contoso.com%7Cabc%7C0%7C0%7C638000000000000000%7CUnknown"
                + "&sdata=B990tWxPufitizDBqQwh9u318kVo7ijfRx1kfIO827E%3D&reserved=0"
        },
        Wrapper(description: "Proofpoint v1") { inner in
            "https://urldefense.proofpoint.com/v1/url?u=\(percentEncoded(inner))&k=nwrngxqCxAtK5GNVPKjCWl%0A"
                + "&r=SdfXfAiuVNWl6Z8wlvP6i46VjkgOeUSZU5gK3C9X%0A&m=2hmSNX1lNx5r5YBGIXUTioEbUSjIad2H%0A&s=664b54be56b1"
        },
        Wrapper(description: "Proofpoint v2") { inner in
            "https://urldefense.proofpoint.com/v2/url?u=\(proofpointV2(inner))&d=DwMFaQ&c=oSIC08qd83mI"
                + "&r=Zdd3nc3Rydpc5y2O&m=2RuFzO3kf7Ew&s=xo6l3THl00O48uis&e="
        },
        Wrapper(description: "Proofpoint v3") { inner in
            proofpointV3(inner)
        },
        Wrapper(description: "Google redirector") { inner in
            "https://www.google.com/url?q=\(percentEncoded(inner))&sa=D&source=editors&ust=1985604889892575&usg=IruUaoPnNeB9"
        },
        Wrapper(description: "Barracuda") { inner in
            "https://linkprotect.cudasvc.com/url?a=\(percentEncoded(inner))&c=E,1,dpziQ8dW06cB5ua82Doq42Hi,&typo=1"
        },
    ]

    /// Ways a link reaches the user inside a larger text.
    static let carriers: [Wrapper] = [
        Wrapper(description: "bare") { $0 },
        Wrapper(description: "sentence") { "Please open \($0). Thanks!" },
        Wrapper(description: "HTML anchor") { link in
            "<p>Hi,</p><p><a href=\"\(htmlEscaped(link))\" target=\"_blank\">Sign in</a></p>"
        },
        Wrapper(description: "markdown") { "[Sign in](\($0))" },
        Wrapper(description: "angle brackets folded") { link in
            "Your link:\n<\(folded(link, every: 60, with: "\n   "))>\nBye"
        },
        Wrapper(description: "quoted-printable") { link in
            "Content-Transfer-Encoding: quoted-printable\r\n\r\nFollow this link:\r\n\(quotedPrintable(link))\r\n"
        },
    ]

    /// Percent-encodes every byte but the unreserved characters (RFC 3986 section 2.3).
    static func percentEncoded(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                output += "%" + hex(byte)
            }
        }
        return output
    }

    /// Proofpoint v2: percent-encode all but letters, digits, `.` and `~` (so `-` and `_` too),
    /// then write `%` as `-` and `/` as `_`.
    static func proofpointV2(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            if byte == UInt8(ascii: "/") {
                output += "_"
            } else if isUnreserved(byte), byte != UInt8(ascii: "-"), byte != UInt8(ascii: "_") {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                output += "-" + hex(byte)
            }
        }
        return "\(output)"
    }

    /// Proofpoint v3: characters outside letters, digits, `.`, `/` and `:` become `*` (one) or
    /// `**X` (a run of 2…65, X from `A–Z a–z 0–9 - _`), and go, in order, into a base64url string.
    static func proofpointV3(_ text: String) -> String {
        let runLetters = Array(Base64URL.alphabet)
        var template = ""
        var taken = ""
        var pending = [Character]()
        func flush() {
            var remaining = pending[...]
            while !remaining.isEmpty {
                let chunk = min(remaining.count, 65)
                template += chunk == 1 ? "*" : "**" + String(runLetters[chunk - 2])
                taken += String(remaining.prefix(chunk))
                remaining = remaining.dropFirst(chunk)
            }
            pending.removeAll()
        }
        for character in text {
            let isSafe = character.isASCII && (character.isLetter || character.isNumber || ".:/".contains(character))
            if isSafe {
                flush()
                template.append(character)
            } else {
                pending.append(character)
            }
        }
        flush()
        let encoded = base64URL(taken)
        return "https://urldefense.com/v3/__\(template)__;\(encoded)!!zvyLhYfE!k7Iv9QMP2lMo8Rbh3vHohzvm$"
    }

    /// The UTF-8 of `text` in base64url without padding.
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `&`, `<`, `>` and `"` as HTML character references.
    static func htmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Quoted-printable (RFC 2045): `=` as `=3D`, lines of at most 76 characters joined by soft
    /// breaks that never split an escape.
    static func quotedPrintable(_ text: String) -> String {
        var units = [String]()
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") || byte >= 0x7F || byte < 0x20 {
                units.append("=" + hex(byte))
            } else {
                units.append(String(Unicode.Scalar(byte)))
            }
        }
        var output = ""
        var line = 0
        for unit in units {
            if line + unit.count > 75 {
                output += "=\r\n"
                line = 0
            }
            output += unit
            line += unit.count
        }
        return output
    }

    /// `text` with `separator` inserted every `every` characters.
    static func folded(_ text: String, every: Int, with separator: String) -> String {
        var output = ""
        for (index, character) in text.enumerated() {
            if index > 0, index % every == 0 {
                output += separator
            }
            output.append(character)
        }
        return output
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }
}
