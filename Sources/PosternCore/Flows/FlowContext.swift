import Foundation
import PosternCrypto

/// What every flow needs, made once per service and shared: the store, the key ring, the clock,
/// the settings, the password hasher, the pasted-link parser and the code counters — and the input
/// checks every request path applies the same way. (The outbox is woken by the store's doorbell
/// after each commit that queued mail, not by the flows.)
final class FlowContext: Sendable {
    let store: any Store
    let keys: KeyRingCache
    let clock: any WallClock
    let config: AuthConfiguration
    let hasher: PasswordHasher
    let parser: PastedLinkParser
    let metrics: CodeMetrics
    /// Queues webhook events in the flows' transactions.
    let events: EventLedger
    /// The toll-fraud gate every SMS passes, in the write that queues it.
    let smsAdmission: SMSAdmission
    /// The caps on public mail per recipient domain and in all, in the write that queues it.
    let mailCaps: MailCaps
    /// The challenge a public request that sends mail or SMS may have to solve (`--challenge`).
    let challenges: ChallengeGate
    /// SMS counters (queued, sent, dead by country code; caps hit).
    let smsMetrics: SMSMetrics
    /// The operator's log, for refusals a page does not explain (why a provider's token was refused).
    let logger: Logger?
    /// The hooks that decide (`--hook-*`): asked outside the transactions (``writeAskingHooks(_:)``).
    let hooks: SignInHooks

    /// - Throws: `AuthError.internalError` when the public URL or the allowed hosts are unusable.
    init(
        store: any Store, keys: KeyRingCache, clock: any WallClock, config: AuthConfiguration, hasher: PasswordHasher,
        metrics: CodeMetrics, logger: Logger? = nil, challengeHTTP: (any ProviderHTTP)? = nil,
        hookHTTP: (any HookHTTP)? = nil
    ) throws(AuthError) {
        self.store = store
        self.keys = keys
        self.clock = clock
        self.config = config
        self.hasher = hasher
        self.metrics = metrics
        self.logger = logger
        events = EventLedger(
            configuration: config.webhooks, newDeviceWindow: config.newDeviceWindow, drawsEveryEvent: !store.isConfinedToThisMachine)
        hooks = SignInHooks(configuration: config.hooks, http: hookHTTP, clock: clock, logger: logger.map { Self.labelled($0, "hooks") })
        let smsMetrics = SMSMetrics()
        self.smsMetrics = smsMetrics
        mailCaps = MailCaps(configuration: config.mailCaps, keys: keys, logger: logger.map { Self.labelled($0, "mail") })
        challenges = try ChallengeGate(configuration: config.challenge, keys: keys, clock: clock, http: challengeHTTP)
        smsAdmission = SMSAdmission(configuration: config.sms, keys: keys, metrics: smsMetrics, logger: logger.map { Self.labelled($0, "sms") })
        do {
            parser = PastedLinkParser(
                policy: try LinkPolicy(publicURL: config.publicURL, allowedHosts: config.allowedContinueHosts))
        } catch {
            throw .internalError("cannot set up the flows: \(error)")
        }
    }

    // MARK: transactions

    /// Runs `body` in a write transaction, mapping store failures to 503 and keeping `AuthError`s;
    /// `syncingLater`: with `Store.writeSyncingLater` (a counter whose last moment may be lost
    /// with the machine, never a code or a token).
    func write<T: Sendable>(
        syncingLater: Bool = false, _ body: @escaping @Sendable (any StoreWriter) throws -> T
    ) throws(AuthError) -> T {
        let body = Self.carryingOrigin(body)
        do {
            return try syncingLater ? store.writeSyncingLater(body) : store.write(body)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Runs `body` as ``write(syncingLater:_:)`` does and hands what it came to to `then`: on the
    /// store's writer thread after the commit when the store queues writes (``answersFromCommit``),
    /// else on this thread before returning. `then` must not block.
    func write<T: Sendable>(
        _ body: @escaping @Sendable (any StoreWriter) throws -> T, then: @escaping @Sendable (Result<T, AuthError>) -> Void
    ) {
        guard let queued = store as? any QueuedWriteStore else {
            then(Result { () throws(AuthError) in try write(body) })
            return
        }
        queued.queueWrite(syncingLater: false, gathering: false, Self.carryingOrigin(body)) { result in then(result.mapError(Self.failure)) }
    }

    /// `body` with the request's ``SessionOrigin`` bound where it runs (the store's writer thread
    /// does not inherit the request's task-locals): the issuer and the events ledger read it there.
    static func carryingOrigin<T>(
        _ body: @escaping @Sendable (any StoreWriter) throws -> T
    ) -> @Sendable (any StoreWriter) throws -> T {
        guard let origin = SessionOrigin.current else { return body }
        return { tx in try SessionOrigin.$current.withValue(origin) { try body(tx) } }
    }

    /// Whether a write can be handed to the store without waiting on it and nothing else on a
    /// request's way to it waits on the store: a store with a writer of its own
    /// (``QueuedWriteStore``) that only this machine opens, so the per-IP limit is counted in memory
    /// (``ClientLimit``). The HTTP server then answers such requests from their commit.
    var answersFromCommit: Bool { store is any QueuedWriteStore && store.isConfinedToThisMachine }

    /// A store failure as the flows answer it: 503, or what the closure threw.
    static func failure(_ error: any Error) -> AuthError {
        switch error {
        case let error as AuthError: error
        case let error as StoreError: error.isAddressTaken ? .credentialAlreadyInUse : .unavailable(error.description)
        default: .internalError("\(error)")
        }
    }

    /// Runs `body` against a snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T) throws(AuthError) -> T {
        do {
            return try store.read(body)
        } catch {
            throw Self.readFailure(error)
        }
    }

    /// What a read's failure is to the caller: an `AuthError` as it is, anything else (the store's)
    /// `unavailable`.
    static func readFailure(_ error: any Error) -> AuthError {
        (error as? AuthError) ?? .unavailable("\(error)")
    }

    // MARK: input every request path checks alike

    /// An address a request names: parsed, and refused unless a mail to it can be built, so that
    /// nothing is recorded that could never be sent.
    func parseEmail(_ text: String) throws(AuthError) -> EmailAddress {
        let address: EmailAddress
        do { address = try EmailAddress.parse(text) } catch { throw .invalidEmail(error) }
        guard MailMailbox.problem(with: address) == nil else { throw .invalidEmail(EmailAddressError(.notMailable)) }
        return address
    }

    /// Checks a continue URL with the parser's rule (the exact origin of an allowed host or the
    /// public URL's own, http(s) without user info, no https → http downgrade, none of the
    /// parameters the hosted page appends).
    func checkContinueURL(_ url: String?) throws(AuthError) -> String? {
        guard let url, !url.isEmpty else { return nil }
        guard let allowed = parser.policy.allowedContinueURL(url) else {
            throw .invalidContinueURL(
                "continueUrl must be an absolute http(s) URL without user info or mode/oobCode/apiKey/lang parameters, on the public URL's origin or one in --allowed-continue-hosts (a bare host there means the default port).")
        }
        return allowed
    }

    /// A BCP 47-looking tag (letters, digits, hyphens, ≤ 35 characters), lower-cased; nil otherwise.
    static func cleanLocale(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 35,
            trimmed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        return trimmed.replacingOccurrences(of: "_", with: "-").lowercased()
    }

    /// Checks the shape of a PKCE S256 challenge.
    /// - Throws: `invalidArgument` unless it is base64url of 32 bytes.
    static func checkChallenge(_ challenge: String?) throws(AuthError) {
        guard let challenge else { return }
        guard challenge.count == 43, Base64URL.decode(challenge)?.count == 32 else {
            throw .invalidArgument("codeChallenge must be base64url(SHA-256(codeVerifier)): 43 characters.")
        }
    }

    /// The PKCE S256 challenge of `verifier`: base64url(SHA-256(verifier)), as an app sends it
    /// and as a browser-bound link stores its cookie's.
    static func s256Challenge(of verifier: String) -> String { Base64URL.encode(SHA256.hash(verifier)) }

    /// Whether `verifier` answers `challenge`, compared in constant time.
    static func verifier(_ verifier: String, answers challenge: String) -> Bool {
        ConstantTime.equals(Array(s256Challenge(of: verifier).utf8), Array(challenge.utf8))
    }

    /// The scrypt hash of a new password.
    func hashPassword(_ password: String) throws(AuthError) -> String {
        do { return try hasher.hash(password) } catch { throw .internalError("password hashing failed: \(error)") }
    }

    /// `now + seconds`, or the latest representable time when that overflows (a lifetime is
    /// bounded by the settings; this keeps a bad one from trapping the daemon).
    static func adding(_ seconds: Int64, to now: Int64) -> Int64 { FlowMath.adding(seconds, to: now) }

    // MARK: ids

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
}

extension FlowContext {
    /// `logger` under another label: each concern's lines say whose they are (`sms`, `mail`).
    static func labelled(_ logger: Logger, _ label: String) -> Logger {
        var copy = logger
        copy.label = label
        return copy
    }

    /// Logs a refusal the caller is shown only in general words: its code and the reason kept for
    /// the operator (``AuthError/logDetail``), never a secret.
    func logRefusal(_ error: AuthError) {
        logger?.info("sign-in refused", ["code": error.code, "detail": error.logDetail ?? error.message])
    }
}
