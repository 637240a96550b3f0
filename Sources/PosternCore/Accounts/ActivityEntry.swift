import PosternCrypto

/// One line of an account's activity (`GET /v1/me/activity`): what happened and when, with the
/// sign-in's method, device and coarse network where it was one. Never a code, a token, an address
/// or a full IP.
public struct ActivityEntry: Sendable, Hashable {
    /// The row's number, ascending in insertion order: with `at` the list's cursor. 0 before it is stored.
    public var id: Int64
    public var uid: String
    /// Seconds since 1970.
    public var at: Int64
    /// `signIn`, `accountCreated`, `passwordChanged`, `passwordReset`, `emailChanged`,
    /// `emailVerified`, `emailRecovered`, `anonymousUpgraded`, `phoneLinked`, `phoneRemoved`,
    /// `providerLinked`, `providerUnlinked`, `sessionRevoked` (``ActivityEntry/init(event:at:origin:)``).
    public var kind: String
    /// A sign-in's method (`password`, `emailLink`, …), a revocation's reason, or the provider
    /// linked or unlinked.
    public var method: String?
    public var deviceName: String?
    public var network: String?

    /// Creates an entry.
    public init(
        id: Int64 = 0, uid: String, at: Int64, kind: String, method: String? = nil, deviceName: String? = nil, network: String? = nil
    ) {
        self.id = id
        self.uid = uid
        self.at = at
        self.kind = kind
        self.method = method
        self.deviceName = deviceName
        self.network = network
    }

    /// The activity an account event is, nil for an event that is none (a mail's, a profile's,
    /// a migration's): the events ledger records it beside the event's webhook, in its
    /// transaction, so every flow that reports an event adds to the activity too. A sign-in takes
    /// the device and network of `origin`.
    public init?(event: WebhookEvent, at: Int64, origin: SessionOrigin?) {
        let uid: String
        var method: String?
        let kind: String
        switch event {
        case .userSignedIn(let who, let how):
            (uid, kind, method) = (who, "signIn", how)
        case .userCreated(let who, _, _): (uid, kind) = (who, "accountCreated")
        case .userPasswordChanged(let who): (uid, kind) = (who, "passwordChanged")
        case .userPasswordReset(let who): (uid, kind) = (who, "passwordReset")
        case .userEmailChanged(let who, _): (uid, kind) = (who, "emailChanged")
        case .userEmailVerified(let who): (uid, kind) = (who, "emailVerified")
        case .userEmailRecovered(let who, _): (uid, kind) = (who, "emailRecovered")
        case .userAnonymousUpgraded(let who, _): (uid, kind) = (who, "anonymousUpgraded")
        case .phoneVerified(let who, _): (uid, kind) = (who, "phoneLinked")
        case .phoneRemoved(let who, _): (uid, kind) = (who, "phoneRemoved")
        case .userProviderLinked(let who, let provider): (uid, kind, method) = (who, "providerLinked", provider)
        case .userProviderUnlinked(let who, let provider, _): (uid, kind, method) = (who, "providerUnlinked", provider)
        case .sessionRevoked(let who, let reason): (uid, kind, method) = (who, "sessionRevoked", reason)
        case .sessionRefreshReuseDetected(let who): (uid, kind, method) = (who, "sessionRevoked", "refreshReuse")
        case .userMigrated, .userDeleted, .userProfileUpdated, .userDisabled, .mailSent, .mailDeferred, .mailFailed, .mailBounced,
            .webhookTest:
            return nil
        }
        let signIn = kind == "signIn"
        self.init(
            uid: uid, at: at, kind: kind, method: method, deviceName: signIn ? origin?.deviceName : nil,
            network: signIn ? origin?.network : nil)
    }
}

/// A position in an account's activity, newest first: the entry last answered.
public struct ActivityCursor: Sendable, Hashable {
    public var at: Int64
    public var id: Int64

    /// The position of entry `id` at `at`.
    public init(at: Int64, id: Int64) {
        self.at = at
        self.id = id
    }

    /// The opaque text answered as `nextCursor`: ``CursorText`` of the time and the row's number.
    public var text: String { CursorText.encode(at, String(id)) }

    /// The cursor `text` names; nil when it is not one of ours.
    public init?(text: String) {
        guard let (at, key) = CursorText.decode(text), let id = Int64(key) else { return nil }
        self.init(at: at, id: id)
    }

    /// Whether entry `id` at `at` comes after this cursor (newest first).
    public func precedes(at other: Int64, id otherID: Int64) -> Bool {
        other < at || (other == at && otherID < id)
    }
}
