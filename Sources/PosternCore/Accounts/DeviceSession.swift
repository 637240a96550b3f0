/// One session as its owner sees it in `GET /v1/me/sessions`: one refresh-token family (one
/// sign-in, refreshed since), under a public random id that is neither the family nor anything
/// derived from a token. Only a coarse network is kept (``IPAddress/networkKey``), never the address.
public struct DeviceSession: Sendable, Hashable {
    /// The public id (`sid` in the session's ID tokens).
    public var id: String
    /// Whose session it is.
    public var uid: String
    /// The refresh-token family it names: revoking the session revokes it.
    public var family: String
    /// "Chrome on Linux", or the name the app gave an approval; nil when nothing said.
    public var deviceName: String?
    /// The /24 (IPv4) or /48 (IPv6) it signed in from; nil when unknown.
    public var network: String?
    /// How it signed in (`sign_in_method`).
    public var method: String
    /// The OpenID Connect client it was issued to; nil for a session of the API.
    public var clientID: String?
    public var createdAt: Int64
    /// Its last refresh (its sign-in until the first).
    public var lastUsedAt: Int64
    /// When its refresh token stops working: a refresh moves it on.
    public var expiresAt: Int64

    /// Creates a session row.
    public init(
        id: String, uid: String, family: String, deviceName: String?, network: String?, method: String, clientID: String? = nil,
        createdAt: Int64, lastUsedAt: Int64, expiresAt: Int64
    ) {
        self.id = id
        self.uid = uid
        self.family = family
        self.deviceName = deviceName
        self.network = network
        self.method = method
        self.clientID = clientID
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
    }
}

/// Where a request that may sign someone in comes from, as a session and the account's activity
/// keep it: the device's name and the client's coarse network, never its address.
///
/// The router binds it for the request (``current``) and `FlowContext.write` carries it into the
/// transaction, so the issuer and the events ledger read it there without every sign-in flow
/// passing it along.
public struct SessionOrigin: Sendable, Hashable {
    /// "Chrome on Linux"; nil when unknown.
    public var deviceName: String?
    /// The /24 or /48 of the client's address; nil when unknown.
    public var network: String?

    /// The origin of a client at `clientIP` (kept as its network only) named `deviceName`.
    /// `clientIP` is an address, or an IPv6 network such as the router's key of a client
    /// (``IPAddress/limitKey``, `2001:db8:1:2::/64`): its base address lies in the same /48.
    public init(deviceName: String?, clientIP: String?) {
        let address = clientIP.flatMap { $0.split(separator: "/", maxSplits: 1).first }.flatMap { IPAddress(String($0)) }
        self.init(deviceName: deviceName, network: address?.networkKey)
    }

    /// The origin of a device named `deviceName` in `network` (already coarse).
    public init(deviceName: String?, network: String?) {
        self.deviceName = deviceName
        self.network = network
    }

    /// The origin of the request being served; nil outside one (the CLI, housekeeping).
    @TaskLocal public static var current: SessionOrigin?
}
