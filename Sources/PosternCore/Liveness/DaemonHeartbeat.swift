/// One daemon's heartbeat as the store keeps it: who claims (the lease owner, or the prefix of
/// its workers' owners), where it runs, and when it last said it was alive.
///
/// An outbox pool's workers claim as `owner:0`, `owner:1`, …; the webhook worker claims as
/// `owner` itself. Either way the claims belong to the row (``ownsLease(_:)``).
public struct DaemonHeartbeat: Sendable, Hashable {
    /// The lease owner, or the prefix (before `:`) of its workers' owners.
    public let owner: String
    /// The host name the daemon runs on.
    public let host: String
    /// Its process id on that host.
    public let pid: Int32
    /// When the daemon wrote its first heartbeat, in Unix seconds: its process started before this.
    public let startedAt: Int64
    /// When it last wrote it, in Unix seconds.
    public let beatAt: Int64

    /// A heartbeat.
    public init(owner: String, host: String, pid: Int32, startedAt: Int64, beatAt: Int64) {
        self.owner = owner
        self.host = host
        self.pid = pid
        self.startedAt = startedAt
        self.beatAt = beatAt
    }

    /// The same daemon, beating at `now`.
    public func beating(at now: Int64) -> DaemonHeartbeat {
        DaemonHeartbeat(owner: owner, host: host, pid: pid, startedAt: startedAt, beatAt: now)
    }

    /// Whether a claim by `leaseOwner` is this daemon's: the owner itself, or one of its workers
    /// (`owner:…`). Stores match the same way in SQL.
    public func ownsLease(_ leaseOwner: String) -> Bool {
        leaseOwner == owner || leaseOwner.hasPrefix(owner + ":")
    }
}

/// Claims taken back from daemons whose heartbeat stopped, per table. Counts only.
public struct ReclaimedClaims: Sendable, Hashable {
    /// Outbox messages whose lease was ended early.
    public var messages: Int
    /// Webhook deliveries whose lease was ended early.
    public var webhooks: Int
    /// SMS outbox messages whose lease was ended early.
    public var sms: Int
    /// Dead daemons whose heartbeat row was removed.
    public var owners: Int

    /// The counts.
    public init(messages: Int = 0, webhooks: Int = 0, sms: Int = 0, owners: Int = 0) {
        self.messages = messages
        self.webhooks = webhooks
        self.sms = sms
        self.owners = owners
    }

    /// Adds `other`'s counts.
    public static func += (left: inout ReclaimedClaims, right: ReclaimedClaims) {
        left.messages += right.messages
        left.webhooks += right.webhooks
        left.sms += right.sms
        left.owners += right.owners
    }
}
