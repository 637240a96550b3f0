import PosternCore

/// Which address a request is counted against (the per-IP rate limit's key): the socket peer, or
/// behind proxies the operator names, the nearest address in X-Forwarded-For that no trusted
/// proxy wrote.
///
/// Why the rightmost untrusted hop and not the leftmost entry: each proxy appends the address of
/// whoever connected to it, so only the entries to the right of the last untrusted hop were
/// written by proxies the operator runs. Everything to the left came from the client, who can
/// write any address there (and so escape the limit with a fresh one per request).
public struct ClientAddressPolicy: Sendable {
    private enum Trust: Sendable {
        /// X-Forwarded-For is ignored.
        case none
        /// `--trust-proxy` alone: the socket peer is a trusted proxy; its own entry (the rightmost)
        /// is the client.
        case peer
        /// `--trusted-proxies`: the peer must be in these ranges for the header to count, and hops
        /// in them are skipped.
        case networks([IPNetwork])
    }

    private let trust: Trust

    /// Only the socket peer counts.
    public static let socketPeer = ClientAddressPolicy(trust: .none)

    private init(trust: Trust) { self.trust = trust }

    /// The policy of `--trust-proxy` and `--trusted-proxies` (which wins when both are given).
    /// - Throws: `IPNetworkError` quoting the first entry that is not a CIDR.
    public init(trustProxy: Bool, trustedProxies: [String]) throws(IPNetworkError) {
        var networks: [IPNetwork] = []
        for entry in trustedProxies { networks.append(try IPNetwork(parsing: entry)) }
        if !networks.isEmpty {
            trust = .networks(networks)
        } else {
            trust = trustProxy ? .peer : .none
        }
    }

    /// The policy `settings` ask for.
    /// - Throws: `IPNetworkError` for a `--trusted-proxies` entry that is not a CIDR.
    public init(settings: Settings) throws(IPNetworkError) {
        try self.init(trustProxy: settings.trustProxy, trustedProxies: settings.trustedProxies)
    }

    /// The key a request from `peer` carrying `forwardedFor` (every X-Forwarded-For line, joined
    /// with commas in arrival order) is counted under: the client's address as ``IPAddress/limitKey``
    /// writes it (an IPv6 client by its /64).
    ///
    /// An entry that is not an address stops the walk at the hop to its right: a proxy the operator
    /// runs always writes an address, so garbage was written by someone else, and the hop that
    /// passed it on is the nearest address we can vouch for. That key is shared by everyone behind
    /// that hop — the limit stays in force rather than trusting text the client wrote.
    public func clientIP(peer: String, forwardedFor: String?) -> String {
        let peerKey = IPAddress(peer)?.limitKey ?? peer
        guard let forwardedFor else { return peerKey }
        let entries = forwardedFor.split(separator: ",", omittingEmptySubsequences: false)
        switch trust {
        case .none:
            return peerKey
        case .peer:
            guard let last = entries.last, let address = IPAddress(String(last)) else { return peerKey }
            return address.limitKey
        case .networks(let networks):
            guard let peerAddress = IPAddress(peer), networks.contains(where: { $0.contains(peerAddress) }) else {
                return peerKey
            }
            var nearest = peerAddress
            for entry in entries.reversed() {
                guard let hop = IPAddress(String(entry)) else { return nearest.limitKey }
                if !networks.contains(where: { $0.contains(hop) }) { return hop.limitKey }
                nearest = hop
            }
            // Every hop is a trusted proxy: the farthest one is as near the client as we can see.
            return nearest.limitKey
        }
    }
}
