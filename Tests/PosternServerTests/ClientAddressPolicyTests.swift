import PosternCore
@testable import PosternServer
import Testing

@Suite("Client address behind proxies")
struct ClientAddressPolicyTests {
    private func policy(trustProxy: Bool = false, _ proxies: [String] = []) throws -> ClientAddressPolicy {
        try ClientAddressPolicy(trustProxy: trustProxy, trustedProxies: proxies)
    }

    @Test("without proxy settings X-Forwarded-For is ignored")
    func socketPeerOnly() throws {
        let p = try policy()
        #expect(p.clientIP(peer: "192.0.2.1", forwardedFor: "203.0.113.9") == "192.0.2.1")
        #expect(ClientAddressPolicy.socketPeer.clientIP(peer: "192.0.2.1", forwardedFor: "203.0.113.9") == "192.0.2.1")
    }

    @Test("--trust-proxy takes the rightmost entry, not the leftmost the client wrote")
    func trustProxyRightmost() throws {
        let p = try policy(trustProxy: true)
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "10.9.9.9, 198.51.100.7") == "198.51.100.7")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "1.1.1.1,2.2.2.2,198.51.100.7") == "198.51.100.7")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "198.51.100.7") == "198.51.100.7")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: nil) == "127.0.0.1")
    }

    @Test("spoofed leftmost entries all land on the same key", arguments: ["10.0.0.1", "10.0.0.2", "evil", "::1", ""])
    func spoofedLeftmost(spoof: String) throws {
        let p = try policy(["127.0.0.1/32"])
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "\(spoof), 198.51.100.7") == "198.51.100.7")
    }

    @Test("a chain of trusted hops is skipped to the first untrusted one")
    func trustedChain() throws {
        let p = try policy(["10.0.0.0/8", "127.0.0.1"])
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "6.6.6.6, 198.51.100.7, 10.1.2.3, 10.0.0.5") == "198.51.100.7")
        // Every hop trusted: the farthest one.
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "10.1.1.1, 10.2.2.2") == "10.1.1.1")
    }

    @Test("an untrusted peer's X-Forwarded-For is not read")
    func untrustedPeer() throws {
        let p = try policy(["10.0.0.0/8"])
        #expect(p.clientIP(peer: "192.0.2.50", forwardedFor: "198.51.100.7") == "192.0.2.50")
    }

    @Test("garbage stops the walk at the trusted hop that passed it on")
    func garbage() throws {
        let p = try policy(["10.0.0.0/8"])
        #expect(p.clientIP(peer: "10.0.0.1", forwardedFor: "not-an-ip") == "10.0.0.1")
        #expect(p.clientIP(peer: "10.0.0.1", forwardedFor: "198.51.100.7, junk, 10.0.0.9") == "10.0.0.9")
        #expect(p.clientIP(peer: "10.0.0.1", forwardedFor: "198.51.100.7,,") == "10.0.0.1")
        #expect(p.clientIP(peer: "10.0.0.1", forwardedFor: "1.2.3") == "10.0.0.1")
        let peerOnly = try policy(trustProxy: true)
        #expect(peerOnly.clientIP(peer: "10.0.0.1", forwardedFor: "198.51.100.7, <script>") == "10.0.0.1")
    }

    @Test("IPv6 hops, brackets, ports and IPv4-mapped addresses resolve to canonical text")
    func ipv6() throws {
        let p = try policy(["fd00::/8", "127.0.0.1/32"])
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "2001:DB8::1, fd00::7") == "2001:db8::/64")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "[2001:db8::2]:4711") == "2001:db8::/64")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "198.51.100.7:8080") == "198.51.100.7")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "::ffff:198.51.100.7") == "198.51.100.7")
        // An IPv4-mapped hop inside a trusted IPv4 range is trusted.
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "198.51.100.7, ::ffff:127.0.0.1") == "198.51.100.7")
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "fe80::1%eth0") == "127.0.0.1")
    }

    @Test("an IPv6 client counts by its /64, the socket peer's too: rotating source addresses in it is one key")
    func ipv6ByPrefix() throws {
        let p = try policy(["127.0.0.1/32"])
        let keys = Set(["2001:db8:1:2::a", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:DB8:1:2:0:0:0:1"].map {
            p.clientIP(peer: "127.0.0.1", forwardedFor: $0)
        })
        #expect(keys == ["2001:db8:1:2::/64"])
        #expect(p.clientIP(peer: "127.0.0.1", forwardedFor: "2001:db8:1:3::a") == "2001:db8:1:3::/64")
        #expect(ClientAddressPolicy.socketPeer.clientIP(peer: "2001:db8:1:2::9", forwardedFor: nil) == "2001:db8:1:2::/64")
        #expect(ClientAddressPolicy.socketPeer.clientIP(peer: "2001:db8:1:2::9", forwardedFor: "1.2.3.4") == "2001:db8:1:2::/64")
        // IPv4, IPv4-mapped included, stays one address.
        #expect(ClientAddressPolicy.socketPeer.clientIP(peer: "::ffff:192.0.2.9", forwardedFor: nil) == "192.0.2.9")
    }

    @Test("--trusted-proxies wins over --trust-proxy")
    func bothSettings() throws {
        let p = try policy(trustProxy: true, ["10.0.0.0/8"])
        #expect(p.clientIP(peer: "192.0.2.50", forwardedFor: "198.51.100.7") == "192.0.2.50")
    }

    @Test("the settings' policy fails on a bad entry and names it")
    func fromSettings() throws {
        var settings = Settings()
        settings.trustedProxies = ["10.0.0.0/8", "10.0.0.0/40"]
        #expect(throws: IPNetworkError(entry: "10.0.0.0/40")) { try ClientAddressPolicy(settings: settings) }
    }
}
