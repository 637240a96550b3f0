@testable import PosternCore
import Testing

@Suite("CIDR parsing")
struct IPNetworkTests {
    @Test("IPv4 and IPv6 ranges, and bare addresses, are read", arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"), ("192.0.2.7", "192.0.2.7/32"), ("10.1.2.3/8", "10.0.0.0/8"),
        ("fd00::/8", "fd00::/8"), ("2001:db8::1", "2001:db8::1/128"), ("0.0.0.0/0", "0.0.0.0/0"),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8"), (" 172.16.0.0/12 ", "172.16.0.0/12"), ("192.168.1.0/23", "192.168.0.0/23"),
    ])
    func parses(entry: String, canonical: String) throws {
        #expect(try IPNetwork(parsing: entry).description == canonical)
    }

    @Test("a bad entry is refused, quoted in the message", arguments: [
        "10.0.0.0/33", "fd00::/129", "10.0.0/8", "example.com", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8",
        "", "10.0.0.0/ 8", "10.0.0.0/x", "::ffff:10.0.0.0/8", "fe80::1%eth0/64", "10.0.0.0/0008",
    ])
    func refuses(entry: String) {
        #expect(throws: IPNetworkError(entry: entry)) { try IPNetwork(parsing: entry) }
        #expect(IPNetworkError(entry: entry).description.contains(entry.debugDescription))
    }

    @Test("membership follows the prefix, bit by bit, and never crosses families")
    func contains() throws {
        let net = try IPNetwork(parsing: "192.168.0.0/23")
        #expect(net.contains(try #require(IPAddress("192.168.1.255"))))
        #expect(!net.contains(try #require(IPAddress("192.168.2.0"))))
        let v6 = try IPNetwork(parsing: "2001:db8::/33")
        #expect(v6.contains(try #require(IPAddress("2001:db8:7fff::1"))))
        #expect(!v6.contains(try #require(IPAddress("2001:db8:8000::1"))))
        #expect(!(try IPNetwork(parsing: "::/0")).contains(try #require(IPAddress("10.0.0.1"))))
        #expect(try IPNetwork(parsing: "0.0.0.0/0").contains(try #require(IPAddress("::ffff:10.0.0.1"))))
    }

    @Test("an address is read bare, bracketed, with a port, and between spaces and tabs", arguments: [
        ("198.51.100.7", "198.51.100.7"), (" \t198.51.100.7\t ", "198.51.100.7"), ("198.51.100.7:8080", "198.51.100.7"),
        ("2001:db8::2", "2001:db8::2"), ("[2001:db8::2]", "2001:db8::2"), (" [2001:db8::2]:4711 ", "2001:db8::2"),
        ("::ffff:198.51.100.7", "198.51.100.7"), ("[::ffff:198.51.100.7]:1", "198.51.100.7"),
    ])
    func reads(text: String, canonical: String) throws {
        #expect(try #require(IPAddress(text)).description == canonical)
    }

    // Only spaces and tabs are a header list's whitespace: anything else around an entry is not an
    // address (the walk stops there, ClientAddressPolicy), however Unicode classes it.
    @Test("addresses that are not IP addresses are nil", arguments: [
        "", "localhost", "1.2.3", "1.2.3.4.5", "[::1", "[::1]x", "1.2.3.4:", "1.2.3.4:x", "::1::2", " ", "\t",
        "1.2.3.4\u{A0}", "\u{3000}1.2.3.4", "1.2.3.4\n", "[::1]:", "[::1]:x", "1.2.3.4:80:80", "1.2.3.4 :80",
    ])
    func notAddresses(text: String) {
        #expect(IPAddress(text) == nil)
    }
}
