import Foundation
@testable import PosternCore
import PosternCrypto
import PosternTestSupport
import Testing

/// The SSRF door: an admin (or a setting) pointing outgoing HTTP at the machine itself, its
/// cloud's metadata service or the private network, in every spelling a resolver reads.
@Suite("Targets of outgoing HTTP")
struct TargetAddressPolicyTests {
    /// Each URL, and the address its host spells.
    static let privateSpellings: [(url: String, address: String)] = [
        ("http://127.0.0.1/hook", "127.0.0.1"), ("http://0x7f000001/hook", "127.0.0.1"), ("http://2130706433/hook", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"), ("http://127.1:8080/", "127.0.0.1"), ("http://0x7f.0.0.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"), ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[::1]/hook", "::1"), ("http://[::ffff:127.0.0.1]:9/", "127.0.0.1"), ("http://[::ffff:7f00:1]/", "127.0.0.1"),
        ("https://10.0.0.5/", "10.0.0.5"), ("http://192.168.1.1/", "192.168.1.1"), ("http://172.16.3.4/", "172.16.3.4"),
        ("http://[fc00::1]/", "fc00::1"), ("http://[fd12:3456::1]/", "fd12:3456::1"), ("http://0.0.0.0/", "0.0.0.0"),
        ("http://00/", "0.0.0.0"), ("http://100.64.0.1/", "100.64.0.1"), ("http://[fe80::1]/", "fe80::1"),
        ("http://224.0.0.1/", "224.0.0.1"), ("http://[ff02::1]/", "ff02::1"), ("http://[::]/", "::"),
    ]

    @Test("every private spelling is read as its address and refused", arguments: privateSpellings)
    func refused(url: String, address: String) throws {
        let host = try #require(TargetAddressPolicy.literalHost(ofURL: url))
        #expect(host.description == address)
        #expect(TargetAddressPolicy().refusal(of: host) != nil)
        #expect(throws: SettingsError.self) { try TargetAddressPolicy().check(url: url, setting: "--webhook-urls") }
    }

    @Test("names and public addresses pass the literal check", arguments: [
        "https://hooks.example/in", "http://localhost:8080/", "https://8.8.8.8/", "http://[2606:4700::1111]/", "http://1.2.3.4.5/",
        "http://0x7f000001.example/", "http://127.0.0.1.nip.io/", "http://09.1.1.1/",
    ])
    func passes(url: String) throws {
        #expect(throws: Never.self) { try TargetAddressPolicy().check(url: url, setting: "--webhook-urls") }
    }

    @Test("--allow-private-targets lets its ranges through, in any spelling, and nothing else")
    func allowed() throws {
        let policy = TargetAddressPolicy(allowing: try IPNetwork.list("127.0.0.1/32, fd00::/8"))
        for url in ["http://127.0.0.1/", "http://0x7f000001/", "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://[fd00::5]/"] {
            #expect(throws: Never.self) { try policy.check(url: url, setting: "--webhook-urls") }
        }
        for url in ["http://127.0.0.2/", "http://[::1]/", "http://169.254.169.254/", "http://[fc00::1]/"] {
            #expect(throws: SettingsError.self) { try policy.check(url: url, setting: "--webhook-urls") }
        }
    }

    @Test("a refusal names the setting and the address, never the URL's path or query")
    func message() {
        do throws(SettingsError) {
            try TargetAddressPolicy().check(url: "http://0x7f000001:8080/hooks/s3cr3t?token=t0k3n", setting: "--smtp-url")
            Issue.record("not refused")
        } catch {
            #expect(error.message.hasPrefix("--smtp-url: 127.0.0.1 is a loopback address"))
            #expect(error.message.contains("--allow-private-targets"))
            #expect(!error.message.contains("s3cr3t") && !error.message.contains("t0k3n"))
        }
    }

    @Test("the settings refuse a literal private HTTP target at start, naming the setting, unless allowed", arguments: [
        (["smtp-url": "http://127.0.0.1:9/send", "mail-http-secret-file": "/s"], "--smtp-url"),
        (["webhook-urls": "https://hooks.example/in, http://[::1]:9/in"], "--webhook-urls"),
        (["sms-transport": "json:http://169.254.169.254/sms"], "--sms-transport"),
        (["sms-transport": "twilio:AC" + String(repeating: "0", count: 32), "sms-twilio-base-url": "http://2130706433:9"],
         "--sms-twilio-base-url"),
    ])
    func settings(flags: [String: String], setting: String) throws {
        do throws(SettingsError) {
            _ = try Settings.resolve(flags: flags, environment: [:], file: [:])
            Issue.record("not refused")
        } catch {
            #expect(error.message.hasPrefix(setting + ": "), "\(error.message)")
        }
        let allowed = try Settings.resolve(
            flags: flags, environment: ["POSTERN_ALLOW_PRIVATE_TARGETS": "127.0.0.0/8,::1/128,169.254.169.254"], file: [:])
        #expect(allowed.allowPrivateTargets.count == 3)
    }

    @Test("a bad --allow-private-targets entry is named")
    func badEntry() {
        do throws(SettingsError) {
            _ = try Settings.resolve(flags: ["allow-private-targets": "127.0.0.1/33"], environment: [:], file: [:])
            Issue.record("not refused")
        } catch {
            #expect(error.message.hasPrefix("--allow-private-targets: ") && error.message.contains("127.0.0.1/33"))
        }
    }

    @Test("registering a webhook endpoint refuses every private spelling, and takes it when allowed")
    func registration() throws {
        let store = InMemoryStore()
        let box = try SecretBox(key: Array(repeating: 3, count: 32))
        let keys = KeyVault(store: store, box: box, clock: ManualClock(), maxCodeLifetime: 3600)
        let vault = keys.webhookEndpoints(configured: WebhookConfiguration())
        for (url, address) in Self.privateSpellings {
            do throws(AuthError) {
                _ = try vault.add(url: url, events: nil)
                Issue.record("\(url) was registered")
            } catch {
                #expect(error.code == "INVALID_ARGUMENT")
                #expect(error.message.hasPrefix("url: \(address) is a") && error.message.contains("--allow-private-targets"), "\(error.message)")
            }
        }
        #expect(try store.read { try $0.webhookEndpoints() }.isEmpty)
        let open = keys.webhookEndpoints(configured: WebhookConfiguration(targets: TargetAddressPolicy(allowing: try IPNetwork.list("127.0.0.1/32"))))
        #expect(try open.add(url: "http://127.0.0.1:9/hook", events: nil).endpoint.url == "http://127.0.0.1:9/hook")
        #expect(throws: AuthError.self) { try open.add(url: "http://[::1]:9/hook", events: nil) }
    }
}

/// The pure-Swift address text against the C library's, which the server used before it moved
/// to Core.
@Suite("IP address text, against inet_pton and inet_ntop")
struct IPAddressOracleTests {
    static func pton(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    static func ntop(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test("hand-picked texts are read as inet_pton reads them")
    func edges() {
        let texts = [
            "1.2.3.4", "01.2.3.4", "1.2.3", "256.1.1.1", "1.2.3.4.", "0.0.0.0", "255.255.255.255", "1.2.3.04", "::", "::1", "1::",
            ":::", "1:::2", "1::2::3", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8::",
            "::ffff:1.2.3.4", "::1.2.3.4", "1::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3", "::01.2.3.4",
            "1.2.3.4::", "12345::", "abcd::EF01", ":1::", "1:", ":", "", "g::", "::ffff:256.1.1.1", "fe80::1%eth0", " ::1", "1::2:",
            "0:0:0:0:0:0:0:0", "00000::", "0::0", "1:2:3:4:5:6:7:8:", "::1.2.3.4:5",
        ]
        for text in texts {
            #expect(IPAddress.presentationToBytes(text) == Self.pton(text), "\(text.debugDescription)")
        }
    }

    @Test("random addresses, zero runs and all, are written as inet_ntop writes them and read back")
    func random() {
        var generator = SeededRandom(seed: 7)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...1, using: &generator) == 0 ? 4 : 16
            // Mostly zeros, so runs of every length and place come up.
            let bytes = (0..<count).map { _ in Int.random(in: 0...3, using: &generator) == 0 ? UInt8.random(in: 0...255, using: &generator) : 0 }
            let text = IPAddress(bytes: bytes).description
            let unmapped = IPAddress(bytes: bytes).bytes
            #expect(text == Self.ntop(unmapped), "\(bytes)")
            #expect(IPAddress.presentationToBytes(text) == Self.pton(text), "\(text)")
            #expect(IPAddress(text)?.bytes == unmapped, "\(text)")
        }
    }
}
