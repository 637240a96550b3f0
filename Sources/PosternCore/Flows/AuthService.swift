import Foundation
import PosternCrypto

/// The sign-in, password, verification and address flows: the Swift API that the daemon's
/// endpoints and the CLI both call. Request paths do constant work and only record; what a mail
/// says is decided later by `composeMail` (the outbox's content stage).
///
/// Every method is synchronous and thread-safe; state changes run in one store transaction each.
public final class AuthService: Sendable {
    let store: any Store
    let keys: KeyRingCache
    let clock: any WallClock
    let config: AuthConfiguration
    let hasher: PasswordHasher
    let parser: PastedLinkParser
    let ipLimiter: IPRateLimiter
    /// Called after a transaction that queued mail has committed (wakes the outbox workers).
    let mailQueued: @Sendable () -> Void
    /// A hash of a random password with `hasher`'s parameters: unknown addresses are checked
    /// against it so that every failed password sign-in costs the same time.
    let dummyPasswordHash: String
    /// Code requests recorded, codes consumed and codes refused.
    public let metrics = CodeMetrics()

    /// Creates the service.
    /// - Throws: `AuthError` when the public URL or allowed hosts are unusable, or hashing fails.
    public init(
        store: any Store, keys: KeyRingCache, clock: any WallClock, config: AuthConfiguration,
        hasher: PasswordHasher = .standard, ipPerMinute: Int64 = 300, mailQueued: @escaping @Sendable () -> Void = {}
    ) throws(AuthError) {
        self.store = store
        self.keys = keys
        self.clock = clock
        self.config = config
        self.hasher = hasher
        self.ipLimiter = IPRateLimiter(perMinute: ipPerMinute)
        self.mailQueued = mailQueued
        do {
            parser = PastedLinkParser(
                policy: try LinkPolicy(publicURL: config.publicURL, allowedHosts: config.allowedContinueHosts))
            dummyPasswordHash = try hasher.hash(Base64URL.encode(try SecureRandom.bytes(24)))
        } catch {
            throw .internalError("cannot set up the flows: \(error)")
        }
    }

    // MARK: shared steps

    /// Runs `body` in a write transaction, mapping store failures to 503 and keeping `AuthError`s.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) throws(AuthError) -> T {
        do {
            return try store.write(body)
        } catch let error as AuthError {
            throw error
        } catch let error as StoreError {
            throw error.isAddressTaken ? .credentialAlreadyInUse : .unavailable(error.description)
        } catch {
            throw .internalError("\(error)")
        }
    }

    /// Runs `body` against a snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T) throws(AuthError) -> T {
        do {
            return try store.read(body)
        } catch let error as AuthError {
            throw error
        } catch {
            throw .unavailable("\(error)")
        }
    }

    /// Applies the per-IP limit of the public endpoints (the HTTP layer calls it once per request).
    /// - Throws: `AuthError.tooManyAttempts`.
    public func checkClient(ip: String) throws(AuthError) {
        if let wait = ipLimiter.take(ip: ip, now: clock.now().timeIntervalSince1970) {
            throw .tooManyAttempts(retryAfter: wait)
        }
    }

    /// An address a request names: parsed, and refused unless a mail to it can be built, so that
    /// nothing is recorded that could never be sent.
    func parseEmail(_ text: String) throws(AuthError) -> EmailAddress {
        let address: EmailAddress
        do { address = try EmailAddress.parse(text) } catch { throw .invalidEmail(error) }
        guard MailMailbox.problem(with: address) == nil else { throw .invalidEmail(EmailAddressError(.notMailable)) }
        return address
    }

    /// Checks a continue URL with the parser's rule (exact allowed host or the public URL's own,
    /// http(s) without user info, no https → http downgrade).
    func checkContinueURL(_ url: String?) throws(AuthError) -> String? {
        guard let url, !url.isEmpty else { return nil }
        guard let allowed = parser.policy.allowedContinueURL(url) else {
            throw .invalidContinueURL(
                "continueUrl must be an absolute http(s) URL without user info, to the public URL's host or one in --allowed-continue-hosts.")
        }
        return allowed
    }

    /// A new random id (16 bytes, base64url): uids and token families.
    static func newID() throws(AuthError) -> String {
        do { return Base64URL.encode(try SecureRandom.bytes(16)) } catch { throw .internalError("\(error)") }
    }

    /// A new action-request id, which is also its code's nonce (16 bytes, base64url): the time in
    /// milliseconds (6 bytes, big-endian) then 80 random bits.
    ///
    /// Requests made in the same second share their first six characters, so a group commit's
    /// inserts land on a few pages of the id index instead of one random page each (measured: the
    /// WAL written per request roughly halves). The code carries its issue time anyway, so the
    /// prefix tells nothing new; uniqueness rests on 80 random bits per millisecond.
    static func newRequestID(at time: Date) throws(AuthError) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let milliseconds = UInt64(max(0, time.timeIntervalSince1970 * 1000))
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        do {
            try bytes.withUnsafeMutableBytes { try SecureRandom.fillBuffered(UnsafeMutableRawBufferPointer(rebasing: $0[6...])) }
        } catch {
            throw .internalError("\(error)")
        }
        return Base64URL.encode(bytes)
    }

    /// The per-address bucket for `action`: an HMAC under the active action-code key, so the
    /// table holds no addresses, and a copy of the database alone cannot be searched with a list
    /// of addresses. Rotating that key starts the counts afresh (they span an hour at most).
    func addressBucket(_ action: String, _ email: EmailAddress) -> [UInt8] {
        Array(keys.current.actionCodes.activeMAC.authenticate(Array("postern-rate|\(action)|\(email.normalized)".utf8)).prefix(16))
    }

    /// Records a mail request of `purpose` and queues its intent, after the per-address limit.
    /// Does the same work whether or not the address has an account.
    func recordRequest(_ request: ActionRequest, intent: MailIntent) throws(AuthError) {
        let (interval, perHour) = (config.mailInterval, config.mailPerHour)
        // With both limits off there is nothing to count (the same for every address).
        let bucket = interval > 0 || perHour > 0 ? addressBucket(request.purpose.rawValue, request.email) : nil
        let wait = try write { tx -> Int64? in
            if let bucket, let wait = try tx.rateLimit(bucket: bucket, now: request.createdAt, interval: interval, perHour: perHour) {
                return wait
            }
            try tx.insertActionRequest(request)
            _ = try tx.enqueue(intent, recipient: request.email, now: request.createdAt, giveUpAt: request.expiresAt)
            return nil
        }
        if let wait { throw .tooManyAttempts(retryAfter: wait) }
        metrics.requested(request.purpose.action)
        mailQueued()
    }

    /// Queues a notice (no code) for `recipient` inside a transaction.
    static func queueNotice(
        _ intent: MailIntent, to recipient: EmailAddress, tx: any StoreWriter, now: Int64
    ) throws {
        _ = try tx.enqueue(intent, recipient: recipient, now: now, giveUpAt: now + 86_400)
    }
}
