import Foundation
import PosternCore
import Testing

@Suite("Settings")
struct SettingsTests {
    @Test("defaults are the embedded ones")
    func defaults() throws {
        let s = try Settings.resolve(flags: [:], environment: [:], file: [:])
        #expect(s.listen == "127.0.0.1:8080")
        #expect(s.database == "./postern.db")
        #expect(s.smtpURL == nil)
        #expect(s.publicURL == "http://127.0.0.1:8080")
        #expect(s.effectiveContinueHosts == ["127.0.0.1"])
        #expect(s.ttlSignIn == 600 && s.ttlResetPassword == 3600 && s.ttlVerifyEmail == 259_200)
        #expect(s.mailInterval == 60 && s.mailPerHour == 5 && s.ipPerMinute == 300 && s.workers == 4)
        #expect(s.adminToken == nil && s.adminTokenGuesses == 10)
    }

    @Test("a flag beats the environment, which beats the file")
    func precedence() throws {
        let file = ["workers": "2", "ttl-sign-in": "900", "public-url": "https://file.example.com"]
        let environment = ["POSTERN_WORKERS": "3", "POSTERN_TTL_SIGN_IN": "1200"]
        let flags = ["workers": "5"]
        let s = try Settings.resolve(flags: flags, environment: environment, file: file)
        #expect(s.workers == 5)
        #expect(s.ttlSignIn == 1200)
        #expect(s.publicURL == "https://file.example.com")
        #expect(s.effectiveContinueHosts == ["file.example.com"])
    }

    @Test("bad settings name the setting, where it came from, and what to fix", arguments: [
        (["public-url": "/relative"], [String: String](), "--public-url"),
        (["public-url": "ftp://x.example.com"], [:], "--public-url"),
        ([:], ["POSTERN_WORKERS": "zero"], "POSTERN_WORKERS"),
        (["workers": "257"], [:], "--workers"),
        (["listen": "8080"], [:], "--listen"),
        (["smtp-url": "ftp://mail.example.com"], [:], "--smtp-url"),
        (["admin-token": "short"], [:], "--admin-token"),
        (["admin-token-guesses": "0"], [:], "--admin-token-guesses"),
        (["trust-proxy": "maybe"], [:], "--trust-proxy"),
        // Every number is bounded: no setting can overflow the arithmetic it feeds.
        (["ttl-sign-in": "9223372036854775807"], [:], "--ttl-sign-in"),
        (["ttl-sign-in": "9223372036854775808"], [:], "--ttl-sign-in"),
        (["ttl-reset-password": "2592001"], [:], "--ttl-reset-password"),
        ([:], ["POSTERN_TTL_VERIFY_EMAIL": "99999999999"], "POSTERN_TTL_VERIFY_EMAIL"),
        (["scrypt-log-n": "21"], [:], "--scrypt-log-n"),
        (["workers": "100000"], [:], "--workers"),
        (["mail-interval": "-1"], [:], "--mail-interval"),
        // Webhooks: an unknown type, an empty filter, a URL with a password in it.
        (["webhook-events": "user.created,user.nothing"], [:], "--webhook-events"),
        (["webhook-events": " , "], [:], "--webhook-events"),
        (["webhook-events": "nothing.*"], [:], "--webhook-events"),
        (["webhook-urls": "https://user:secret@hooks.example/in"], [:], "--webhook-urls"),
        (["webhook-urls": "https:///in"], [:], "--webhook-urls"),
    ])
    func refusals(flags: [String: String], environment: [String: String], origin: String) {
        let error = #expect(throws: SettingsError.self) { try Settings.resolve(flags: flags, environment: environment, file: [:]) }
        #expect(error?.message.hasPrefix(origin) == true, "\(error?.message ?? "")")
    }

    @Test("--webhook-events: * is every type; user.* the user types known; a list is sorted and exact")
    func webhookEvents() throws {
        #expect(try Settings.resolve(flags: [:], environment: [:], file: [:]).webhookEvents == .all)
        #expect(try Settings.resolve(flags: ["webhook-events": "user.created, *"], environment: [:], file: [:]).webhookEvents == .all)
        let users = try Settings.resolve(flags: ["webhook-events": "user.*,mail.failed"], environment: [:], file: [:]).webhookEvents
        #expect(users.types == (WebhookEvent.types.filter { $0.hasPrefix("user.") } + ["mail.failed"]).sorted())
        #expect(users.admits("user.deleted") && users.admits("mail.failed") && !users.admits("mail.sent") && !users.admits("session.revoked"))
        #expect(users.admits("webhook.test"), "a test event always reaches its endpoint")
        #expect(users.description == users.types?.joined(separator: ","))
        #expect(WebhookEventFilter(storedForm: users.description) == users)
    }

    @Test("the longest lifetime a setting allows is 30 days, and it is accepted")
    func longestTTL() throws {
        let s = try Settings.resolve(flags: ["ttl-verify-email": "2592000"], environment: [:], file: [:])
        #expect(s.ttlVerifyEmail == 30 * 86_400)
    }

    @Test("the file's keys are the flag names")
    func fileKeys() throws {
        let s = try Settings.resolve(flags: [:], environment: [:], file: ["allowed-continue-hosts": "App.Example.com, b.example.com"])
        #expect(s.allowedContinueHosts == ["app.example.com", "b.example.com"])
    }
}

@Suite("UTC timestamps")
struct UTCTimestampTests {
    @Test("match Foundation's ISO 8601 formatter across eras, leap days and the epoch")
    func matchesFoundation() {
        let formatter = ISO8601DateFormatter()
        var seconds: [Int64] = [0, -1, 86_399, 86_400, 951_782_400, 951_868_799, 1_796_032_966, 4_102_444_800, 253_402_300_799]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            seconds.append(Int64(state >> 30) % 8_000_000_000 - 1_000_000_000)
        }
        for s in seconds {
            #expect(UTCTimestamp.iso8601(s) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(s))), "\(s)")
        }
    }
}
