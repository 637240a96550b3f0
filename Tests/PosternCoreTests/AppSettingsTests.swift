import Foundation
import PosternCore
import Testing

/// `--apple-app-ids`, `--android-apps`, `--app-name` and `--support-email`: what each accepts,
/// how it is normalised, and the sentence a wrong one gets.
@Suite("App settings")
struct AppSettingsTests {
    static let fingerprint = (0..<32).map { String(format: "%02X", ($0 * 37 + 11) % 256) }.joined(separator: ":")

    @Test("TEAMID.bundle.id parses into its parts; a list drops spaces, empty entries and repeats")
    func appleAppIDs() throws {
        let id = try AppleAppID(parsing: "ABCDE12345.com.example.App-1")
        #expect(id.teamID == "ABCDE12345" && id.bundleID == "com.example.App-1" && id.description == "ABCDE12345.com.example.App-1")
        let list = try AppleAppID.list(" ABCDE12345.com.example.app , ,9JA89QQLNQ.org.example.beta,ABCDE12345.com.example.app")
        #expect(list.map(\.description) == ["ABCDE12345.com.example.app", "9JA89QQLNQ.org.example.beta"])
    }

    @Test("a malformed Apple app ID is refused, saying which part is wrong", arguments: [
        ("com.example.app", "Team ID"),
        ("abcde12345.com.example.app", "Team ID"),
        ("ABCDE1234.com.example.app", "Team ID"),
        ("ABCDE123456.com.example.app", "Team ID"),
        ("ABCDE-2345.com.example.app", "Team ID"),
        ("ABCDE12345", "TEAMID.bundle.id"),
        ("ABCDE12345.app", "bundle ID"),
        ("ABCDE12345.com..app", "bundle ID"),
        ("ABCDE12345.com.example.app.", "bundle ID"),
        ("ABCDE12345.com.exa_mple.app", "bundle ID"),
        ("ABCDE12345.com.example.*", "bundle ID"),
        ("ABCDE12345.com.ex ample.app", "bundle ID"),
    ])
    func appleRefusals(text: String, says: String) {
        let error = #expect(throws: SettingsError.self) { try AppleAppID(parsing: text) }
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(text.debugDescription) == true, "the entry is quoted")
    }

    @Test("package:FINGERPRINT parses; a lower-case fingerprint is made upper-case; repeats are dropped")
    func androidApps() throws {
        let app = try AndroidApp(parsing: "com.example.app:" + Self.fingerprint.lowercased())
        #expect(app.packageName == "com.example.app" && app.fingerprint == Self.fingerprint)
        #expect(app.fingerprint.split(separator: ":").count == 32)
        let list = try AndroidApp.list("com.example.app:\(Self.fingerprint), org.example.app_2:\(Self.fingerprint),com.example.app:\(Self.fingerprint.lowercased())")
        #expect(list.map(\.packageName) == ["com.example.app", "org.example.app_2"])
    }

    @Test("a malformed Android app is refused, saying which part is wrong", arguments: [
        ("com.example.app", "package:SHA256_FINGERPRINT"),
        ("example:" + AppSettingsTests.fingerprint, "package name"),
        ("com.1example.app:" + AppSettingsTests.fingerprint, "package name"),
        ("com.example-app.x:" + AppSettingsTests.fingerprint, "package name"),
        ("com..app:" + AppSettingsTests.fingerprint, "package name"),
        ("com.example.app:" + AppSettingsTests.fingerprint.dropLast(3), "fingerprint"),
        ("com.example.app:" + AppSettingsTests.fingerprint + ":00", "fingerprint"),
        ("com.example.app:" + AppSettingsTests.fingerprint.replacingOccurrences(of: ":", with: ""), "fingerprint"),
        ("com.example.app:" + "G" + AppSettingsTests.fingerprint.dropFirst(), "fingerprint"),
        ("com.example.app:" + AppSettingsTests.fingerprint.replacingOccurrences(of: ":", with: "-"), "fingerprint"),
    ])
    func androidRefusals(text: String, says: String) {
        let error = #expect(throws: SettingsError.self) { try AndroidApp(parsing: text) }
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
    }

    @Test("the app settings come from flags, the environment or the file, like every other")
    func resolution() throws {
        let none = try Settings.resolve(flags: [:], environment: [:], file: [:])
        #expect(none.appleAppIDs.isEmpty && none.androidApps.isEmpty && none.appName == "Postern" && none.supportEmail == nil)
        let s = try Settings.resolve(
            flags: ["apple-app-ids": "ABCDE12345.com.example.app"],
            environment: ["POSTERN_ANDROID_APPS": "com.example.app:\(Self.fingerprint)", "POSTERN_APP_NAME": "  Acme Sign-in "],
            file: ["support-email": "Help@Example.COM"])
        #expect(s.appleAppIDs.map(\.description) == ["ABCDE12345.com.example.app"])
        #expect(s.androidApps.map(\.fingerprint) == [Self.fingerprint])
        #expect(s.appName == "Acme Sign-in")
        #expect(s.supportEmail == "Help@example.com")
        #expect(s.branding == Branding(appName: "Acme Sign-in", supportEmail: "Help@example.com"))
    }

    @Test("bad app settings name the setting and what to fix", arguments: [
        (["apple-app-ids": "com.example.app"], [String: String](), "--apple-app-ids"),
        (["apple-app-ids": " , "], [:], "--apple-app-ids"),
        ([:], ["POSTERN_ANDROID_APPS": "com.example.app:AB"], "POSTERN_ANDROID_APPS"),
        (["app-name": "   "], [:], "--app-name"),
        (["app-name": "Acme\r\nBcc: x@example.com"], [:], "--app-name"),
        (["app-name": String(repeating: "x", count: 101)], [:], "--app-name"),
        (["support-email": "not an address"], [:], "--support-email"),
        (["support-email": "Help <help@example.com>"], [:], "--support-email"),
        ([:], ["POSTERN_SUPPORT_EMAIL": "hilfe@exämple.de\u{0}"], "POSTERN_SUPPORT_EMAIL"),
    ])
    func refusals(flags: [String: String], environment: [String: String], origin: String) {
        let error = #expect(throws: SettingsError.self) { try Settings.resolve(flags: flags, environment: environment, file: [:]) }
        #expect(error?.message.hasPrefix(origin) == true, "\(error?.message ?? "")")
    }

    @Test("the From mailbox is --mail-from, else the app name at no-reply@localhost")
    func sender() throws {
        let plain = try Settings.resolve(flags: [:], environment: [:], file: [:]).senderMailbox()
        #expect(plain.displayName == "Postern" && plain.address.address == "no-reply@localhost")
        let named = try Settings.resolve(flags: ["app-name": "A&B <Co>"], environment: [:], file: [:]).senderMailbox()
        #expect(named.displayName == "A&B <Co>" && named.address.address == "no-reply@localhost")
        let given = try Settings.resolve(flags: ["app-name": "Acme", "mail-from": "Team <team@example.com>"], environment: [:], file: [:])
            .senderMailbox()
        #expect(given.displayName == "Team" && given.address.address == "team@example.com")
    }
}
