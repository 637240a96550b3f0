/// A link made for an operator or a script (`POST /v1/admin/links`, `postern send-link`).
public struct IssuedLink: Sendable, Hashable {
    public var link: String
    /// The code inside the link: a secret.
    public var oobCode: String
    public var expiresAt: Int64
    /// The mail was queued; `messageID` is its outbox id.
    public var queued: Bool
    public var messageID: Int64?
}

/// What operators do (the admin API and the CLI): make links, look up and change users, watch
/// and steer the mail and SMS outboxes, and keep the webhook endpoints. Unlike the public flows
/// these may tell whether an account exists.
public final class OperatorTools: Sendable {
    /// The persisters this flow's transactions use: its closures are typed with these, so the
    /// compiler holds the flow to them (one transaction still spans them all).
    typealias Writes = any AccountWriter & ActionRequestWriter & SessionWriter & LeasedQueueWriter & OutboxWriter & WebhookWriter & SMSOutboxWriter
    /// What this flow's reads use.
    typealias Reads = any AccountReader & ActionRequestReader & SessionReader & OutboxReader & WebhookReader & SMSOutboxReader
        & ActivityReader

    let context: FlowContext
    let ledger: ActionLedger

    init(context: FlowContext, ledger: ActionLedger) {
        self.context = context
        self.ledger = ledger
    }

    /// The actions an operator may make links for, by their command-line names.
    public static let issuableActions = ["sign-in", "reset-password", "verify-email"]

    /// Makes a link for `email` and, when `queue`, queues the mail that carries it. Unlike the
    /// public endpoints this is for operators: it tells whether the account exists
    /// (`USER_NOT_FOUND` for a reset or verification of an unknown address) and has no limits.
    /// - Throws: `AuthError.invalidArgument` for an unknown action, `invalidEmail`, `userNotFound`.
    public func issueLink(
        action: String, email: String, continueURL: String?, locale: String?, queue: Bool
    ) throws(AuthError) -> IssuedLink {
        let purpose: ActionRequest.Purpose
        switch action {
        case "sign-in", "signIn": purpose = .signIn
        case "reset-password", "resetPassword": purpose = .resetPassword
        case "verify-email", "verifyEmail": purpose = .verifyEmail
        default: throw .invalidArgument("action must be one of \(Self.issuableActions.joined(separator: ", ")).")
        }
        let address = try context.parseEmail(email)
        let continueURL = try context.checkContinueURL(continueURL)
        let now = context.clock.unixSeconds()
        let ring = context.keys.current
        let id = try FlowContext.newRequestID(at: context.clock.now())
        let lifetime = context.config.lifetime(purpose)
        let cleanLocale = locale.flatMap(FlowContext.cleanLocale)
        let ledger = self.ledger
        let issued = try context.write { (tx: Writes) -> IssuedLink in
            let holder = try tx.account(address: address)
            if purpose != .signIn, holder == nil { throw AuthError.userNotFound }
            var request = ActionRequest(
                id: id, purpose: purpose, email: address, uid: purpose == .signIn ? nil : holder?.uid,
                continueURL: continueURL, locale: cleanLocale ?? holder?.locale, createdAt: now, expiresAt: FlowContext.adding(lifetime, to: now))
            if purpose == .signIn { request.sixDigitKeyID = ring.actionCodes.activeKeyID }
            try tx.insertActionRequest(request)
            guard let (link, code) = try ledger.mintLink(for: request, ring: ring, now: now, tx: tx) else {
                throw AuthError.userNotFound
            }
            var messageID: Int64?
            if queue {
                let intent: MailIntent = switch purpose {
                case .signIn: .signIn(requestID: id)
                case .resetPassword: .resetPassword(requestID: id)
                default: .verifyEmail(requestID: id)
                }
                messageID = try tx.enqueue(intent, recipient: address, now: now, giveUpAt: request.expiresAt)
            }
            return IssuedLink(link: link, oobCode: code, expiresAt: request.expiresAt, queued: queue, messageID: messageID)
        }
        context.metrics.requested(purpose.action)
        return issued
    }

    /// The account holding `email`, for operators.
    /// - Throws: `AuthError.invalidEmail`.
    public func user(email: String) throws(AuthError) -> UserRecord? {
        let address = try context.parseEmail(email)
        return try context.read { (tx: Reads) in try tx.account(address: address).map(UserRecord.init) }
    }

    /// The account `uid`, for operators.
    /// - Throws: `AuthError.unavailable`.
    public func user(uid: String) throws(AuthError) -> UserRecord? {
        try context.read { (tx: Reads) in try tx.account(uid: uid).map(UserRecord.init) }
    }

    /// Changes an account for operators: disabled (revokes its sessions), email verified, name.
    /// - Throws: `AuthError.userNotFound`.
    public func updateUser(uid: String, disabled: Bool?, emailVerified: Bool?, displayName: String??) throws(AuthError) -> UserRecord {
        if case .some(.some(let name)) = displayName { try ProfileFlow.checkDisplayName(name) }
        let events = context.events
        let now = context.clock.unixSeconds()
        return try context.write { (tx: Writes) in
            guard var account = try tx.account(uid: uid) else { throw AuthError.userNotFound }
            var changes: [WebhookEvent] = []
            if let disabled {
                if disabled, !account.disabled {
                    changes += [.userDisabled(uid: uid), .sessionRevoked(uid: uid, reason: "disabled")]
                }
                account.disabled = disabled
                if disabled { try SessionFlow.revokeAll(of: &account, tx: tx) }
            }
            if let emailVerified {
                if emailVerified, !account.emailVerified, account.email != nil { changes.append(.userEmailVerified(uid: uid)) }
                account.emailVerified = emailVerified
            }
            if let displayName, displayName != account.displayName {
                account.displayName = displayName
                changes.append(.userProfileUpdated(uid: uid, fields: ["displayName"]))
            }
            try tx.updateAccount(account)
            for event in changes { try events.record(event, tx: tx, now: now) }
            return UserRecord(account)
        }
    }

    /// Deletes an account for operators.
    /// - Throws: `AuthError.userNotFound`.
    public func deleteUser(uid: String) throws(AuthError) {
        let events = context.events
        let now = context.clock.unixSeconds()
        try context.write { (tx: Writes) in
            guard try tx.account(uid: uid) != nil else { throw AuthError.userNotFound }
            try tx.deleteAccount(uid: uid)
            try events.record(.userDeleted(uid: uid), tx: tx, now: now)
        }
    }

    // MARK: the outbox
    /// Outbox metadata for operators (never bodies), newest first.
    /// - Throws: `AuthError.unavailable`.
    public func outboxMessages(state: OutboxState?, limit: Int) throws(AuthError) -> [OutboxMessage] {
        try context.read { (tx: Reads) in try tx.outboxMessages(state: state, limit: limit) }
    }

    /// Message counts by state.
    /// - Throws: `AuthError.unavailable`.
    public func outboxCounts() throws(AuthError) -> OutboxCounts {
        try context.read { (tx: Reads) in try tx.outboxCounts() }
    }

    /// Round trips to the database server so far (``Store/serverRoundTrips``); nil for an embedded store.
    public var storeRoundTrips: Int? { context.store.serverRoundTrips }

    /// How the store's queued writes were committed in batches so far (``Store/writeBatches``);
    /// nil for a store that does not report them.
    public var storeWriteBatches: WriteBatchCounts? { context.store.writeBatches }

    /// Queues a dead message again and lifts the suppression of its address (the operator asks
    /// for another try); false unless it was dead.
    /// - Throws: `AuthError.unavailable`.
    public func retryOutboxMessage(id: Int64) throws(AuthError) -> Bool {
        let now = context.clock.unixSeconds()
        let retried = try context.write { (tx: Writes) -> Bool in
            guard let message = try tx.outboxMessage(id: id), message.state == .dead else { return false }
            _ = try tx.unsuppress(message.recipient)
            return try tx.retryDead(id: id, now: now)
        }
        return retried
    }

    /// One message's metadata and its delivery log (every attempt, oldest first); nil when there
    /// is no such message (a purged one may still have its log: then the log alone).
    /// - Throws: `AuthError.unavailable`.
    public func outboxMessage(id: Int64) throws(AuthError) -> (message: OutboxMessage?, attempts: [OutboxAttempt])? {
        let found = try context.read { (tx: Reads) in (try tx.outboxMessage(id: id), try tx.outboxAttempts(messageID: id)) }
        if found.0 == nil && found.1.isEmpty { return nil }
        return (found.0, found.1)
    }

    /// The messages whose delivery log names `email` (by its keyed hash), newest first, at most
    /// `limit`: their ids, and each one's metadata while the outbox still holds it.
    /// - Throws: `AuthError.invalidEmail`, `unavailable`.
    public func outboxMessages(email: String, limit: Int = 100) throws(AuthError) -> [(id: Int64, message: OutboxMessage?)] {
        let address = try context.parseEmail(email)
        let key: DeliveryLogKey
        do { key = try context.keys.vault.deliveryLogKey() } catch { throw .internalError("\(error)") }
        let hash = key.hash(address)
        let found = try context.read { (tx: Reads) in
            try tx.outboxMessageIDs(recipientHash: hash, limit: limit).map { id in (id, try tx.outboxMessage(id: id)) }
        }
        return found.map { (id: $0.0, message: $0.1) }
    }

    /// Webhook deliveries by state.
    /// - Throws: `AuthError.unavailable`.
    public func webhookCounts() throws(AuthError) -> WebhookCounts { try context.read { (tx: Reads) in try tx.webhookCounts() } }

    /// The webhook endpoints: list, add, remove, rotate, test (the CLI and the admin API).
    public var webhookEndpoints: WebhookEndpointVault {
        context.keys.vault.webhookEndpoints(configured: context.config.webhooks)
    }

    /// Queues a test SMS to `number` (`postern sms test`): an operator's own request, so no
    /// toll-fraud cap applies but the country allowlist, which says where SMS may go at all.
    /// - Throws: `AuthError.smsCountryNotAllowed`, or `unavailable` when the store fails.
    public func queueTestSMS(to number: PhoneNumber, reference: String) throws(AuthError) -> Int64 {
        guard context.config.sms.countries.contains(number.region) else { throw .smsCountryNotAllowed }
        let now = context.clock.unixSeconds()
        let giveUp = now + context.config.sms.policy.maximumAge
        let id = try context.write { (tx: Writes) in try tx.enqueueSMS(.test(reference: reference), recipient: number, now: now, giveUpAt: giveUp) }
        context.smsMetrics.count(.queued, callingCode: number.countryCallingCode)
        return id
    }

    /// The SMS outbox's messages in `state` (all when nil), newest first.
    /// - Throws: `unavailable` when the store fails.
    public func smsMessages(state: OutboxState?, limit: Int) throws(AuthError) -> [SMSMessage] {
        try context.read { (tx: Reads) in try tx.smsMessages(state: state, limit: limit) }
    }

    /// Deletes sent and dead messages finished more than `olderThan` seconds ago.
    /// - Throws: `AuthError.unavailable`.
    public func purgeOutbox(olderThan: Int64) throws(AuthError) -> Int {
        let (before, overflow) = context.clock.unixSeconds().subtractingReportingOverflow(max(0, olderThan))
        if overflow { return 0 }
        // In the housekeeper's batches, so that a purge of a large outbox never holds the writer long.
        let limit = Housekeeper.defaultBatchSize
        var purged = 0
        while true {
            let batch = try context.write { (tx: Writes) in try tx.purgeFinished(.mail, before: before, limit: limit) }
            purged += batch
            if batch < limit { return purged }
        }
    }
}
