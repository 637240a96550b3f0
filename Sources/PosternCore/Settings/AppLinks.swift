import Foundation

/// An Apple app that may open the action links and use the site's credentials: `TEAMID.bundle.id`
/// (`--apple-app-ids`), as `apple-app-site-association` lists it.
public struct AppleAppID: Sendable, Hashable, CustomStringConvertible {
    /// The Team ID (the App ID prefix): 10 characters of `A-Z 0-9`.
    public let teamID: String
    /// The bundle ID, reverse-DNS: `com.example.app`.
    public let bundleID: String

    /// `TEAMID.bundle.id`, the form Apple's file and entitlements use.
    public var description: String { "\(teamID).\(bundleID)" }

    /// Reads `TEAMID.bundle.id`.
    /// - Throws: `SettingsError` saying which part is wrong and what it must look like.
    public init(parsing text: String) throws(SettingsError) {
        let shown = text.debugDescription
        guard let dot = text.firstIndex(of: ".") else {
            throw SettingsError("\(shown) is not TEAMID.bundle.id, such as ABCDE12345.com.example.app")
        }
        let team = String(text[..<dot])
        let bundle = String(text[text.index(after: dot)...])
        guard team.utf8.count == 10, team.utf8.allSatisfy({ AppLinkCharacters.isUpper($0) || AppLinkCharacters.isDigit($0) }) else {
            throw SettingsError("\(shown): the Team ID must be 10 upper-case letters or digits, such as ABCDE12345")
        }
        let labels = bundle.split(separator: ".", omittingEmptySubsequences: false)
        guard bundle.utf8.count <= 155, labels.count >= 2,
            labels.allSatisfy({ label in
                !label.isEmpty && label.utf8.allSatisfy { AppLinkCharacters.isLetter($0) || AppLinkCharacters.isDigit($0) || $0 == UInt8(ascii: "-") }
            })
        else {
            throw SettingsError("\(shown): the bundle ID must be reverse-DNS (com.example.app): two or more dot-separated parts of letters, digits and hyphens")
        }
        teamID = team
        bundleID = bundle
    }

    /// Reads a comma-separated list (`--apple-app-ids`); spaces around entries and repeats are dropped.
    /// - Throws: `SettingsError` for the first entry that does not parse, or for an empty list.
    public static func list(_ text: String) throws(SettingsError) -> [AppleAppID] {
        try AppLinkCharacters.list(text, of: "TEAMID.bundle.id") { entry throws(SettingsError) in try AppleAppID(parsing: entry) }
    }
}

/// An Android app that may open the action links: its package name and the SHA-256 fingerprint of
/// its signing certificate (`--android-apps package:FINGERPRINT`), as `assetlinks.json` lists it.
public struct AndroidApp: Sendable, Hashable, CustomStringConvertible {
    /// The application ID, e.g. `com.example.app`.
    public let packageName: String
    /// The certificate's SHA-256 fingerprint: 32 upper-case hex bytes joined by colons.
    public let fingerprint: String

    /// `package:FINGERPRINT`.
    public var description: String { "\(packageName):\(fingerprint)" }

    /// Reads `package:FINGERPRINT`; a lower-case fingerprint is made upper-case.
    /// - Throws: `SettingsError` saying which part is wrong and what it must look like.
    public init(parsing text: String) throws(SettingsError) {
        let shown = text.debugDescription
        guard let colon = text.firstIndex(of: ":") else {
            throw SettingsError("\(shown) is not package:SHA256_FINGERPRINT, such as com.example.app:14:6D:E9:…")
        }
        let package = String(text[..<colon])
        let bytes = text[text.index(after: colon)...].split(separator: ":", omittingEmptySubsequences: false)
        // Android's rules for an application ID: two or more segments, each starting with a
        // letter, of letters, digits and underscores.
        let segments = package.split(separator: ".", omittingEmptySubsequences: false)
        guard package.utf8.count <= 255, segments.count >= 2,
            segments.allSatisfy({ segment in
                guard let first = segment.utf8.first, AppLinkCharacters.isLetter(first) else { return false }
                return segment.utf8.allSatisfy { AppLinkCharacters.isLetter($0) || AppLinkCharacters.isDigit($0) || $0 == UInt8(ascii: "_") }
            })
        else {
            throw SettingsError("\(shown): the package name must be two or more dot-separated parts, each starting with a letter, of letters, digits and underscores (com.example.app)")
        }
        guard bytes.count == 32, bytes.allSatisfy({ $0.utf8.count == 2 && $0.utf8.allSatisfy(AppLinkCharacters.isHex) }) else {
            throw SettingsError("\(shown): the fingerprint must be the certificate's SHA-256 as 32 hex bytes joined by colons (AB:CD:…, as keytool -list prints it)")
        }
        packageName = package
        fingerprint = bytes.map { $0.uppercased() }.joined(separator: ":")
    }

    /// Reads a comma-separated list (`--android-apps`); spaces around entries and repeats are dropped.
    /// - Throws: `SettingsError` for the first entry that does not parse, or for an empty list.
    public static func list(_ text: String) throws(SettingsError) -> [AndroidApp] {
        try AppLinkCharacters.list(text, of: "package:SHA256_FINGERPRINT") { entry throws(SettingsError) in try AndroidApp(parsing: entry) }
    }
}

/// The ASCII classes the app identifiers are made of.
enum AppLinkCharacters {
    static func isUpper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    static func isLetter(_ byte: UInt8) -> Bool { isUpper(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) }
    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    /// The entries of a comma-separated list, each parsed, in order, without repeats; spaces
    /// around entries and empty entries are dropped. `form` names an entry for the error.
    static func list<Entry: Hashable>(
        _ text: String, of form: String, _ parse: (String) throws(SettingsError) -> Entry
    ) throws(SettingsError) -> [Entry] {
        var entries: [Entry] = []
        for piece in text.split(separator: ",") {
            let trimmed = piece.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let entry = try parse(trimmed)
            if !entries.contains(entry) { entries.append(entry) }
        }
        guard !entries.isEmpty else { throw SettingsError("must list at least one \(form)") }
        return entries
    }
}
