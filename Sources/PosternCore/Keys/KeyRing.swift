import PosternCrypto

/// The keys in use, opened: action-code HMAC keys and ID-token signing keys.
public struct KeyRing: Sendable {
    /// Mints and verifies action codes.
    public let actionCodes: ActionCodeAuthority
    /// Signs ES256 ID tokens: the API's sessions, and the OpenID Connect provider's tokens for
    /// clients registered with ES256.
    public let idTokenSigner: SigningKey
    /// Every ES256 ID-token key that may still verify (active first): the only keys the API's
    /// sessions verify under.
    public let idTokenVerifiers: [SigningKey]
    /// Signs RS256 tokens: the OpenID Connect provider's, for clients registered with RS256.
    public let idTokenRSASigner: RSASigningKey
    /// Every RS256 key that may still verify (active first).
    public let idTokenRSAVerifiers: [RSASigningKey]
    /// Checks passwords against stored hashes of every scheme, with the imported Firebase keys.
    public let passwords: PasswordVerifier
    /// Keys numbers and phone-claim codes (never rotated: see `KeyPurpose.phoneNumber`).
    public let phoneNumbers: HMACKey

    /// The JWKS document (RFC 7517) listing the public keys: the ES256 keys, then the RS256 keys.
    public var jwks: [String: [[String: String]]] {
        ["keys": idTokenVerifiers.map(\.publicJWK) + idTokenRSAVerifiers.map(\.publicJWK)]
    }

    /// The active ID-token key of `algorithm`.
    public func idTokenSigner(_ algorithm: JSONWebToken.Algorithm) -> any JSONWebSigningKey {
        switch algorithm {
        case .es256: idTokenSigner
        case .rs256: idTokenRSASigner
        }
    }

    /// The key of either algorithm that the JWKS publishes under `keyID`, nil for none: what
    /// verifies the OpenID Connect provider's tokens (the API's sessions take ``idTokenVerifiers``
    /// alone). A token still verifies only under a key of the algorithm its header names.
    public func publishedKey(keyID: String) -> (any JSONWebSigningKey)? {
        if let key = idTokenVerifiers.first(where: { $0.keyID == keyID }) { return key }
        return idTokenRSAVerifiers.first { $0.keyID == keyID }
    }
}

/// Where the key vault's new RS256 keys come from: a 2048-bit key made then and there, which
/// takes OpenSSL a tenth of a second or more (tests, which open thousands of rings, take one made
/// once per process: `PosternTestSupport`'s `RSAKeySource.madeOncePerProcess`).
public struct RSAKeySource: Sendable {
    /// The PKCS#8 DER of a new private key.
    public let privateKeyDER: @Sendable () throws -> [UInt8]

    /// A source of `privateKeyDER`'s keys.
    public init(privateKeyDER: @escaping @Sendable () throws -> [UInt8]) { self.privateKeyDER = privateKeyDER }

    /// A new key each time: what the daemon and the command line use.
    public static let generating = RSAKeySource { try RSASigningKey(generatingWithID: "").privateKeyDER() }
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
    /// Makes the RS256 keys.
    let rsaKeys: RSAKeySource

    /// Creates the vault over `store`, sealing secrets with `box`.
    public init(
        store: any Store, box: SecretBox, clock: any WallClock, maxCodeLifetime: Int64, idTokenLifetime: Int64 = 3600,
        rsaKeys: RSAKeySource = .generating
    ) {
        self.store = store
        self.box = box
        self.clock = clock
        self.maxCodeLifetime = maxCodeLifetime
        self.idTokenLifetime = idTokenLifetime
        self.rsaKeys = rsaKeys
    }

    /// Makes sure each purpose has an active key, removes keys past `verifyUntil`, and opens the ring.
    /// A purpose added since the store was made (`idTokenRSA`) gets its first key here, as in a new store.
    /// - Throws: `StoreError`, or `CryptoError` when a sealed key does not open under the master key.
    public func prepare() throws -> KeyRing {
        let now = clock.unixSeconds()
        for purpose in KeyPurpose.rotating {
            // Made outside the transaction (an RSA key takes a while), and only when missing.
            let missing = try store.read { (tx: any KeyReader) in try !Self.hasActiveKey(purpose, tx) }
            let fresh = missing ? try makeKey(purpose, now: now) : nil
            try store.write { (tx: any KeyWriter) in
                _ = try tx.removeExpiredKeys(purpose: purpose, now: now)
                // Another process may have made one meanwhile: the first one stays.
                if let fresh, try !Self.hasActiveKey(purpose, tx) { try tx.insertKey(fresh) }
            }
        }
        let phoneKey = try makeKey(.phoneNumber, now: now)
        try store.write { (tx: any KeyWriter) in
            if try tx.keys(purpose: .phoneNumber).isEmpty { try tx.insertKey(phoneKey) }
        }
        return try open()
    }

    private static func hasActiveKey(_ purpose: KeyPurpose, _ tx: any KeyReader) throws -> Bool {
        try tx.keys(purpose: purpose).contains { $0.status == .active }
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
        let (codeKeys, tokenKeys, rsaKeys, hashKeys, phoneKeys) = try store.read { (tx: any KeyReader) in
            (
                try tx.keys(purpose: .actionCode), try tx.keys(purpose: .idToken), try tx.keys(purpose: .idTokenRSA),
                try tx.keys(purpose: .firebaseHashKey), try tx.keys(purpose: .phoneNumber)
            )
        }
        let usable = { (keys: [KeyRecord]) in keys.filter { $0.status == .active || ($0.verifyUntil ?? 0) > now } }
        var actionActive: ActionCodeAuthority.Key?
        var actionRetired: [ActionCodeAuthority.Key] = []
        for record in usable(codeKeys) {
            let key = try ActionCodeAuthority.Key(id: record.id, secret: try openSecret(record))
            if record.status == .active && actionActive == nil { actionActive = key } else { actionRetired.append(key) }
        }
        let (signer, signers) = try openSigners(usable(tokenKeys)) { der, id throws in try SigningKey(privateKeyDER: der, keyID: id) }
        let (rsaSigner, rsaSigners) = try openSigners(usable(rsaKeys)) { der, id throws in
            try RSASigningKey(privateKeyDER: der, keyID: id)
        }
        guard let actionActive, let signer, let rsaSigner, let phoneRecord = phoneKeys.first else {
            throw StoreError.notFound("active key")
        }
        let phoneNumbers = try HMACKey(key: try openSecret(phoneRecord))
        var firebaseKeys: [UInt32: [UInt8]] = [:]
        for record in hashKeys { firebaseKeys[record.id] = try openSecret(record) }
        return KeyRing(
            actionCodes: ActionCodeAuthority(active: actionActive, retired: actionRetired),
            idTokenSigner: signer, idTokenVerifiers: signers, idTokenRSASigner: rsaSigner, idTokenRSAVerifiers: rsaSigners, passwords: PasswordVerifier(firebaseSignerKeys: firebaseKeys),
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

    /// The signing keys of `records` (each with its record's id as `kid`), opened: the first active
    /// one, and all of them in order.
    private func openSigners<Key>(
        _ records: [KeyRecord], _ open: ([UInt8], String) throws -> Key
    ) throws -> (active: Key?, all: [Key]) {
        var active: Key?
        var all: [Key] = []
        for record in records {
            let key = try open(try openSecret(record), String(record.id))
            if record.status == .active && active == nil { active = key }
            all.append(key)
        }
        return (active, all)
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
        // The kid is the record's id, given when the key is opened: the DER holds no id.
        case .idTokenRSA: return try sealedKey(purpose, secret: try rsaKeys.privateKeyDER(), now: now)
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
