import PosternCrypto

/// The keys in use, opened: action-code HMAC keys and ID-token signing keys.
public struct KeyRing: Sendable {
    /// Mints and verifies action codes.
    public let actionCodes: ActionCodeAuthority
    /// Signs ID tokens.
    public let idTokenSigner: SigningKey
    /// Every ID-token key that may still verify (active first): the JWKS.
    public let idTokenVerifiers: [SigningKey]
    /// Checks passwords against stored hashes of every scheme, with the imported Firebase keys.
    public let passwords: PasswordVerifier
    /// Keys numbers and phone-claim codes (never rotated: see `KeyPurpose.phoneNumber`).
    public let phoneNumbers: HMACKey

    /// The JWKS document (RFC 7517) listing the public keys.
    public var jwks: [String: [[String: String]]] { ["keys": idTokenVerifiers.map(\.publicJWK)] }
}

/// Creates, rotates, prunes and opens the key ring kept in the store.
///
/// Keys rotate without downtime: `rotate` makes a new active key and retires the old one, which
/// keeps verifying until `verifyUntil` (its retirement plus the longest lifetime of anything it
/// signed); after that it is removed and verifies nothing.
public struct KeyVault: Sendable {
    let store: any Store
    let box: SecretBox
    let clock: any WallClock
    /// Longest lifetime of an action code (the longest TTL setting).
    let maxCodeLifetime: Int64
    /// Lifetime of an ID token.
    let idTokenLifetime: Int64

    /// Creates the vault over `store`, sealing secrets with `box`.
    public init(
        store: any Store, box: SecretBox, clock: any WallClock, maxCodeLifetime: Int64, idTokenLifetime: Int64 = 3600
    ) {
        self.store = store
        self.box = box
        self.clock = clock
        self.maxCodeLifetime = maxCodeLifetime
        self.idTokenLifetime = idTokenLifetime
    }

    /// Makes sure each purpose has an active key, removes keys past `verifyUntil`, and opens the ring.
    /// - Throws: `StoreError`, or `CryptoError` when a sealed key does not open under the master key.
    public func prepare() throws -> KeyRing {
        let now = clock.unixSeconds()
        for purpose in KeyPurpose.rotating {
            let fresh = try makeKey(purpose, now: now)
            try store.write { (tx: any KeyWriter) in
                _ = try tx.removeExpiredKeys(purpose: purpose, now: now)
                if try !tx.keys(purpose: purpose).contains(where: { $0.status == .active }) {
                    try tx.insertKey(fresh)
                }
            }
        }
        let phoneKey = try makeKey(.phoneNumber, now: now)
        try store.write { (tx: any KeyWriter) in
            if try tx.keys(purpose: .phoneNumber).isEmpty { try tx.insertKey(phoneKey) }
        }
        return try open()
    }

    /// Makes a new active key for `purpose` and retires the current one.
    /// - Throws: `StoreError` or `CryptoError`.
    /// - Throws: `StoreError.notFound` for a purpose that does not rotate.
    @discardableResult
    public func rotate(_ purpose: KeyPurpose) throws -> KeyRecord {
        guard KeyPurpose.rotating.contains(purpose) else { throw StoreError.notFound("rotating key purpose") }
        let now = clock.unixSeconds()
        let fresh = try makeKey(purpose, now: now)
        let lifetime = purpose == .actionCode ? maxCodeLifetime : idTokenLifetime
        try store.write { (tx: any KeyWriter) in
            _ = try tx.removeExpiredKeys(purpose: purpose, now: now)
            for var key in try tx.keys(purpose: purpose) where key.status == .active {
                key.status = .retired
                key.retiredAt = now
                key.verifyUntil = now + lifetime
                try tx.updateKey(key)
            }
            try tx.insertKey(fresh)
        }
        return fresh
    }

    /// Every key's metadata, per purpose, active first (never the secrets).
    /// - Throws: `StoreError`.
    public func list() throws -> [KeyRecord] {
        try store.read { (tx: any KeyReader) in try KeyPurpose.allCases.flatMap { try tx.keys(purpose: $0) } }
    }

    /// Opens the stored keys.
    /// - Throws: `StoreError.notFound` when a purpose has no active key (call `prepare` first), or
    ///   `CryptoError` when a key does not open under the master key.
    public func open() throws -> KeyRing {
        let now = clock.unixSeconds()
        let (codeKeys, tokenKeys, hashKeys, phoneKeys) = try store.read { (tx: any KeyReader) in
            (
                try tx.keys(purpose: .actionCode), try tx.keys(purpose: .idToken), try tx.keys(purpose: .firebaseHashKey),
                try tx.keys(purpose: .phoneNumber)
            )
        }
        let usable = { (keys: [KeyRecord]) in keys.filter { $0.status == .active || ($0.verifyUntil ?? 0) > now } }
        var actionActive: ActionCodeAuthority.Key?
        var actionRetired: [ActionCodeAuthority.Key] = []
        for record in usable(codeKeys) {
            let key = try ActionCodeAuthority.Key(id: record.id, secret: try openSecret(record))
            if record.status == .active && actionActive == nil { actionActive = key } else { actionRetired.append(key) }
        }
        var signers: [SigningKey] = []
        var signer: SigningKey?
        for record in usable(tokenKeys) {
            let key = try SigningKey(privateKeyDER: try openSecret(record), keyID: String(record.id))
            if record.status == .active && signer == nil { signer = key }
            signers.append(key)
        }
        guard let actionActive, let signer, let phoneRecord = phoneKeys.first else { throw StoreError.notFound("active key") }
        let phoneNumbers = try HMACKey(key: try openSecret(phoneRecord))
        var firebaseKeys: [UInt32: [UInt8]] = [:]
        for record in hashKeys { firebaseKeys[record.id] = try openSecret(record) }
        return KeyRing(
            actionCodes: ActionCodeAuthority(active: actionActive, retired: actionRetired),
            idTokenSigner: signer, idTokenVerifiers: signers, passwords: PasswordVerifier(firebaseSignerKeys: firebaseKeys),
            phoneNumbers: phoneNumbers)
    }

    /// The key ring id of a Firebase project's signer key: the one stored already when an earlier
    /// import gave the same key (so re-running an import changes nothing), else a new sealed key.
    /// With `dryRun` nothing is written (the id is then 0 for a key not stored yet).
    /// - Throws: `StoreError`, or `CryptoError` when a stored key does not open.
    public func firebaseHashKey(_ signerKey: [UInt8], dryRun: Bool = false) throws -> UInt32 {
        for record in try store.read({ (tx: any KeyReader) in try tx.keys(purpose: .firebaseHashKey) })
        where ConstantTime.equals(try openSecret(record), signerKey) {
            return record.id
        }
        if dryRun { return 0 }
        let record = try sealedKey(.firebaseHashKey, secret: signerKey, now: clock.unixSeconds())
        try store.write { (tx: any KeyWriter) in try tx.insertKey(record) }
        return record.id
    }

    private func openSecret(_ record: KeyRecord) throws -> [UInt8] {
        try box.open(record.sealedSecret, context: Self.sealContext(record.id, record.purpose))
    }

    private func makeKey(_ purpose: KeyPurpose, now: Int64) throws -> KeyRecord {
        switch purpose {
        case .actionCode, .phoneNumber: return try sealedKey(purpose, secret: try SecureRandom.bytes(32), now: now)
        // Imported, never made here.
        case .firebaseHashKey: throw StoreError.notFound("rotating key purpose")
        case .idToken:
            var id: UInt32 = 0
            while id == 0 { id = try SecureRandom.uniform(below: UInt32.max) }
            return try sealedKey(purpose, id: id, secret: try SigningKey(generatingWithID: String(id)).privateKeyDER(), now: now)
        }
    }

    /// A new active key record holding `secret` sealed under the master key.
    private func sealedKey(_ purpose: KeyPurpose, id given: UInt32? = nil, secret: [UInt8], now: Int64) throws -> KeyRecord {
        var id = given ?? 0
        while id == 0 { id = try SecureRandom.uniform(below: UInt32.max) }
        return KeyRecord(
            id: id, purpose: purpose, status: .active, createdAt: now,
            sealedSecret: try box.seal(secret, context: Self.sealContext(id, purpose)))
    }

    /// The key of the delivery log's recipient hashes, derived from the master key.
    /// - Throws: `CryptoError`.
    public func deliveryLogKey() throws -> DeliveryLogKey { try DeliveryLogKey(box: box) }

    /// The stored webhook endpoints, their secrets sealed with this vault's master key.
    public func webhookEndpoints(configured: WebhookConfiguration) -> WebhookEndpointVault {
        WebhookEndpointVault(store: store, box: box, clock: clock, configured: configured)
    }

    /// Associated data binding a sealed secret to its row.
    static func sealContext(_ id: UInt32, _ purpose: KeyPurpose) -> [UInt8] { Array("\(purpose.rawValue):\(id)".utf8) }
}
