import PosternCrypto

/// Mints and verifies action codes with a key ring: the active key signs, retired keys still verify
/// until their last code has expired, removed keys verify nothing.
public struct ActionCodeAuthority: Sendable {
    /// One key of the ring, prepared for HMAC.
    public struct Key: Sendable {
        /// The id written into codes.
        public let id: UInt32
        /// The prepared HMAC key.
        public let mac: HMACKey

        /// Prepares `secret` under `id`.
        /// - Throws: `CryptoError` when OpenSSL cannot prepare the key.
        public init(id: UInt32, secret: [UInt8]) throws(CryptoError) {
            self.id = id
            self.mac = try HMACKey(key: secret)
        }
    }

    /// A code freshly minted: its text for the link and when it expires.
    public struct Minted: Sendable {
        /// The base64url code (83 characters), a secret until consumed.
        public let text: String
        /// Seconds since 1970 at which it stops working.
        public let expiresAt: Int64
    }

    private let active: Key
    private let verifying: [Key]

    /// A ring whose `active` key signs and which verifies with `active` and `retired`.
    public init(active: Key, retired: [Key]) {
        self.active = active
        self.verifying = [active] + retired
    }

    /// The id of the signing key.
    public var activeKeyID: UInt32 { active.id }

    /// The key with `id`, if the ring holds it.
    func key(id: UInt32) -> Key? { verifying.first { $0.id == id } }

    /// The signing key's HMAC, for keyed hashes that are not codes (the rate buckets).
    var activeMAC: HMACKey { active.mac }

    /// Mints a code for `action`, bound to `binding`, living `ttl` seconds from `now`.
    /// - Throws: `CryptoError` when the random generator fails.
    public func mint(_ action: EmailAction, binding: StateBinding, ttl: Int64, now: Int64) throws(CryptoError) -> Minted {
        try mint(action, binding: binding, ttl: ttl, now: now, nonce: nil)
    }

    /// Mints a code whose nonce is `nonce` (16 bytes: the id of the request it answers), or a
    /// random one when nil.
    /// - Throws: `CryptoError` when the random generator fails or the nonce is not 16 bytes.
    public func mint(
        _ action: EmailAction, binding: StateBinding, ttl: Int64, now: Int64, nonce: [UInt8]?
    ) throws(CryptoError) -> Minted {
        if let nonce, nonce.count != 16 { throw .malformed("code nonce (needs 16 bytes)") }
        let expiresAt = now + max(ttl, 1)
        var buffer = (
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
            UInt64(0), UInt64(0), UInt64(0), UInt64(0)
        )
        let text = try withUnsafeMutableBytes(of: &buffer) { (raw) throws(CryptoError) -> String in
            // raw[0..<62]: the code; raw[64..<96]: the full tag.
            raw[0] = ActionCode.version
            Self.put32(active.id, raw, 1)
            raw[5] = action.wireValue
            Self.put32(UInt32(truncatingIfNeeded: now), raw, 6)
            Self.put32(UInt32(truncatingIfNeeded: expiresAt), raw, 10)
            if let nonce {
                nonce.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: raw[14..<30]).copyMemory(from: $0) }
            } else {
                try SecureRandom.fillBuffered(UnsafeMutableRawBufferPointer(rebasing: raw[14..<30]))
            }
            binding.bytes.withUnsafeBytes { b in
                UnsafeMutableRawBufferPointer(rebasing: raw[30..<46]).copyMemory(from: b)
            }
            let tag = UnsafeMutableRawBufferPointer(rebasing: raw[64..<96])
            active.mac.authenticate(UnsafeRawBufferPointer(rebasing: raw[0..<ActionCode.signedLength]), into: tag)
            UnsafeMutableRawBufferPointer(rebasing: raw[46..<62]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: raw[64..<80]))
            return String(unsafeUninitializedCapacity: ActionCode.textLength) { out in
                Base64URL.encode(UnsafeRawBufferPointer(rebasing: raw[0..<ActionCode.byteLength]), into: out)
            }
        }
        return Minted(text: text, expiresAt: expiresAt)
    }

    /// Checks the code's tag, then its expiry; returns its content.
    ///
    /// The tag is checked in constant time before anything else is believed; action and binding
    /// are left to `verify(_:expecting:binding:now:)`.
    /// - Throws: `ActionCodeError` (`malformed`, `unknownKey`, `badSignature`, `expired`).
    public func verify(_ text: String, now: Int64) throws(ActionCodeError) -> ActionCode {
        var text = text
        let decoded = text.withUTF8 { utf8 in
            utf8.count == ActionCode.textLength ? Base64URL.decode(UnsafeRawBufferPointer(utf8)) : nil
        }
        guard let bytes = decoded, bytes.count == ActionCode.byteLength, bytes[0] == ActionCode.version else {
            throw .malformed
        }
        let keyID = Self.get32(bytes, 1)
        guard let key = verifying.first(where: { $0.id == keyID }) else { throw .unknownKey }
        var full = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let tagMatches = bytes.withUnsafeBytes { raw in
            withUnsafeMutableBytes(of: &full) { tag in
                key.mac.authenticate(UnsafeRawBufferPointer(rebasing: raw[0..<ActionCode.signedLength]), into: tag)
                return ConstantTime.equals(
                    UnsafeRawBufferPointer(rebasing: tag[0..<ActionCode.tagLength]),
                    UnsafeRawBufferPointer(rebasing: raw[ActionCode.signedLength..<ActionCode.byteLength]))
            }
        }
        guard tagMatches else { throw .badSignature }
        guard let action = EmailAction(wireValue: bytes[5]) else { throw .malformed }
        let expiresAt = Int64(Self.get32(bytes, 10))
        guard now < expiresAt else { throw .expired }
        return ActionCode(
            keyID: keyID, action: action, issuedAt: Int64(Self.get32(bytes, 6)), expiresAt: expiresAt,
            nonce: Array(bytes[14..<30]), binding: StateBinding(raw: Array(bytes[30..<46])))
    }

    /// Checks the code's tag but not its expiry: for questions about a code after its life (was
    /// it used, and where), never to act on it.
    /// - Throws: `ActionCodeError` (`malformed`, `unknownKey`, `badSignature`).
    public func verifyIgnoringExpiry(_ text: String) throws(ActionCodeError) -> ActionCode {
        try verify(text, now: Int64.min)
    }

    /// Verifies the code and that it is for `action` and still matches the account's `binding`.
    /// - Throws: `ActionCodeError`, including `wrongAction` and `stateChanged`.
    public func verify(
        _ text: String, expecting action: EmailAction, binding: StateBinding, now: Int64
    ) throws(ActionCodeError) -> ActionCode {
        let code = try verify(text, now: now)
        guard code.action == action else { throw .wrongAction }
        guard ConstantTime.equals(code.binding.bytes, binding.bytes) else { throw .stateChanged }
        return code
    }

    private static func put32(_ value: UInt32, _ raw: UnsafeMutableRawBufferPointer, _ at: Int) {
        raw[at] = UInt8(value >> 24 & 0xFF)
        raw[at + 1] = UInt8(value >> 16 & 0xFF)
        raw[at + 2] = UInt8(value >> 8 & 0xFF)
        raw[at + 3] = UInt8(value & 0xFF)
    }

    private static func get32(_ raw: [UInt8], _ at: Int) -> UInt32 {
        UInt32(raw[at]) << 24 | UInt32(raw[at + 1]) << 16 | UInt32(raw[at + 2]) << 8 | UInt32(raw[at + 3])
    }
}
