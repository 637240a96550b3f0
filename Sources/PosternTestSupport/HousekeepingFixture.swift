import PosternCore
import PosternCrypto

/// One row of every kind either side of its horizon, for the housekeeping tests of every store:
/// a round at ``now`` must delete the rows named `-old` and keep the others (``kept``).
public enum HousekeepingFixture {
    public static let now: Int64 = 1_800_000_000
    public static let policy = RetentionPolicy()
    public static let address = EmailAddress.restored(localPart: "a", domain: "example.com")

    /// The row names that must survive a round at `now`, and those that must go.
    public static let kept: Set<String> = ["request-live", "code-live", "token-live", "token-rotated", "outbox-recent", "rate-recent", "guess-recent", "webhook-recent", "attempt-recent", "sms-recent", "phone-live", "signin-live", "oidc-live", "oidc-request-live", "oidc-session-live", "session-live", "activity-recent"]

    /// Writes a row just at its horizon (goes) and one a second after (stays) of each kind.
    public static func seed(_ store: any Store) throws {
        @Sendable func horizon(_ rows: ExpiringRows) -> Int64 { policy.horizon(for: rows, now: now) }
        try store.write { tx in
            try tx.insertAccount(Account(uid: "uid-1", email: address, createdAt: now - 100 * 86_400))
            for (name, expiresAt) in [("request-old", horizon(.actionRequests)), ("request-live", horizon(.actionRequests) + 1)] {
                try tx.insertActionRequest(
                    ActionRequest(id: name, purpose: .signIn, email: address, createdAt: expiresAt - 600, expiresAt: expiresAt))
            }
            _ = try tx.consume(nonce: Array("code-old".utf8), expiresAt: horizon(.consumedCodes))
            _ = try tx.consume(nonce: Array("code-live".utf8), expiresAt: horizon(.consumedCodes) + 1)
            for (name, expiresAt, rotatedAt) in [
                ("token-old", horizon(.refreshTokens), Int64?.none), ("token-live", horizon(.refreshTokens) + 1, nil),
                // Rotated long ago, far past the reuse grace: kept to its expiry (replay detection).
                ("token-rotated", horizon(.refreshTokens) + 1, now - 86_400),
            ] {
                try tx.insertRefreshToken(
                    RefreshTokenRecord(
                        hash: SHA256.hash(Array(name.utf8)), family: "family-\(name)", uid: "uid-1", authTime: 0, method: "emailLink",
                        createdAt: expiresAt - 86_400, expiresAt: expiresAt, rotatedAt: rotatedAt))
            }
            _ = try tx.rateLimit(bucket: Array("rate-old".utf8), now: horizon(.rateEvents), interval: 0, perHour: 0)
            _ = try tx.rateLimit(bucket: Array("rate-recent".utf8), now: horizon(.rateEvents) + 1, interval: 0, perHour: 0)
            // A fixed-window counter whose window started at the horizon (goes), one a second after (stays).
            _ = try tx.countInWindow(bucket: Array("window-old".utf8), now: horizon(.rateWindows), window: 1, limit: 10)
            _ = try tx.countInWindow(bucket: Array("window-recent".utf8), now: horizon(.rateWindows) + 1, window: 1, limit: 10)
            // A client bucket full again at the horizon (goes) and one a second later (stays): a
            // request at 60 s before with a limit of 1 a minute moves its time to that moment (in
            // microseconds, as ClientLimit counts).
            let (minute, second) = (Int64(60_000_000), Int64(1_000_000))
            for (name, at) in [("client-old", horizon(.clientRate) * second - minute), ("client-recent", horizon(.clientRate) * second + second - minute)] {
                _ = try tx.takeClientTokens(bucket: Array(name.utf8), now: at, allowed: 1, window: minute, upTo: 1)
            }
            try tx.setGuessRecord(bucket: Array("guess-old".utf8), GuessRecord(failures: 3, lastFailureAt: horizon(.guessBudgets)))
            try tx.setGuessRecord(bucket: Array("guess-recent".utf8), GuessRecord(failures: 3, lastFailureAt: horizon(.guessBudgets) + 1))
        }
        // Outbox: finished at the horizon (goes), a second after (stays), and one never finished.
        for (name, finishedAt) in [("outbox-old", horizon(.outbox)), ("outbox-recent", horizon(.outbox) + 1)] {
            try store.write { tx in
                let id = try tx.enqueue(.passwordChanged(uid: name), recipient: address, now: finishedAt - 10, giveUpAt: finishedAt + 86_400)
                let claims = try tx.claimDue(.mail, owner: "w", now: finishedAt, leaseUntil: finishedAt + 60, limit: 1)
                guard claims.map(\.message.id) == [id], try tx.markSent(.mail, id: id, owner: "w", now: finishedAt, reply: "250 ok") else {
                    throw StoreError.notFound("the seeded outbox message")
                }
            }
        }
        _ = try store.write { tx in try tx.enqueue(.passwordChanged(uid: "queued"), recipient: address, now: now - 90 * 86_400, giveUpAt: now + 86_400) }
        // Webhook deliveries likewise: delivered at the horizon (goes), a second after (stays),
        // and one never delivered.
        for (name, finishedAt) in [("webhook-old", horizon(.webhookDeliveries)), ("webhook-recent", horizon(.webhookDeliveries) + 1)] {
            try store.write { tx in
                try tx.enqueueWebhook(
                    webhookID: name, eventType: "user.deleted", body: "{}", endpoints: ["https://hooks.example.com"],
                    now: finishedAt - 10, giveUpAt: finishedAt + 86_400)
                let claims = try tx.claimDue(.webhooks,
                    owner: "w", now: finishedAt, leaseUntil: finishedAt + 60, limit: 1, claimable: DeliveryStateMachine.claimableStates)
                guard let id = claims.first?.delivery.id, claims.count == 1,
                    try tx.markSent(.webhooks, id: id, owner: "w", now: finishedAt, reply: "HTTP 204")
                else { throw StoreError.notFound("the seeded webhook delivery") }
            }
        }
        // The delivery log: an attempt at the horizon (goes), one a second after (stays).
        for (name, at) in [("attempt-old", horizon(.outboxAttempts)), ("attempt-recent", horizon(.outboxAttempts) + 1)] {
            try store.write { tx in
                try tx.recordOutboxAttempt(
                    OutboxAttempt(
                        messageID: 999, recipientHash: Array(name.utf8), attemptedAt: at, durationMilliseconds: 5, transport: "file",
                        replyCode: 250, reply: name, outcome: .sent))
            }
        }
        // SMS likewise.
        let number = try PhoneNumber.parse("+4915112345678", defaultRegion: nil)
        for (name, finishedAt) in [("sms-old", horizon(.smsOutbox)), ("sms-recent", horizon(.smsOutbox) + 1)] {
            try store.write { tx in
                let id = try tx.enqueueSMS(.test(reference: name), recipient: number, now: finishedAt - 10, giveUpAt: finishedAt + 86_400)
                let claims = try tx.claimDue(.sms,
                    owner: "w", now: finishedAt, leaseUntil: finishedAt + 60, limit: 1, claimable: DeliveryStateMachine.claimableStates)
                guard claims.map(\.id) == [id], try tx.markSent(.sms, id: id, owner: "w", now: finishedAt, reply: "HTTP 201")
                else { throw StoreError.notFound("the seeded SMS") }
            }
        }
        // Phone claims: an unfinished one whose life ended at the horizon (goes), one a second after (stays).
        try store.write { tx in
            for (name, expiresAt) in [("phone-old", horizon(.phoneClaims)), ("phone-live", horizon(.phoneClaims) + 1)] {
                try tx.insertPhoneClaim(PhoneClaim(
                    id: name, uid: nil, numberHash: Array(name.utf8), countryCode: "49", codeHash: Array(name.utf8),
                    createdAt: expiresAt - 600, codeExpiresAt: expiresAt, expiresAt: expiresAt))
            }
            // Phone sign-in requests: one whose code expired at the horizon (goes), one a second after (stays).
            for (name, expiresAt) in [("signin-old", horizon(.phoneSignIns)), ("signin-live", horizon(.phoneSignIns) + 1)] {
                try tx.putPhoneSignIn(PhoneSignInCode(
                    requestID: name, numberHash: Array(name.utf8), countryCode: "49", codeHash: Array(name.utf8),
                    createdAt: expiresAt - 600, expiresAt: expiresAt))
            }
            // OpenID Connect authorization codes: one that expired at the horizon (goes, though
            // never consumed), one a second after (stays, though consumed).
            for (name, expiresAt) in [("oidc-old", horizon(.oidcCodes)), ("oidc-live", horizon(.oidcCodes) + 1)] {
                try tx.insertAuthorizationCode(AuthorizationCodeRecord(
                    codeHash: SHA256.hash(Array(name.utf8)), clientID: "client", uid: "uid-1", redirectURI: "https://app.example.com/cb",
                    scopes: ["openid"], nonce: nil, codeChallenge: nil, authTime: expiresAt - 60, methods: ["link"],
                    refreshFamily: "family-\(name)", createdAt: expiresAt - 60, expiresAt: expiresAt))
            }
            _ = try tx.consumeAuthorizationCode(hash: SHA256.hash(Array("oidc-live".utf8)), at: horizon(.oidcCodes) - 30)
            // Pending authorization requests and browser sessions: at their expiry (goes), a second after (stays).
            for (name, expiresAt) in [("oidc-request-old", horizon(.oidcRequests)), ("oidc-request-live", horizon(.oidcRequests) + 1)] {
                try tx.insertOIDCPendingRequest(OIDCPendingRequest(
                    id: name, browserHash: SHA256.hash(Array(name.utf8)), clientID: "client", parameters: ["state": name],
                    createdAt: expiresAt - 900, expiresAt: expiresAt))
            }
            for (name, expiresAt) in [("oidc-session-old", horizon(.oidcBrowserSessions)), ("oidc-session-live", horizon(.oidcBrowserSessions) + 1)] {
                try tx.insertOIDCBrowserSession(OIDCBrowserSession(
                    hash: SHA256.hash(Array(name.utf8)), uid: "uid-1", authTime: expiresAt - 86_400, methods: ["link"], sessionVersion: 0,
                    createdAt: expiresAt - 86_400, expiresAt: expiresAt))
            }
            // Providers' ID tokens used: one whose ledger entry reached its horizon (goes), one a
            // second after (stays: the next round takes it). The ledger has no read; the rounds' counts tell.
            for (name, expiresAt) in [("provider-token-old", horizon(.providerTokenUses)), ("provider-token-live", horizon(.providerTokenUses) + 1)] {
                _ = try tx.useProviderToken(hash: SHA256.hash(Array(name.utf8)), expiresAt: expiresAt)
            }
            // The sessions users see: at their expiry (goes), a second after (stays).
            for (name, expiresAt) in [("session-old", horizon(.sessions)), ("session-live", horizon(.sessions) + 1)] {
                try tx.insertDeviceSession(DeviceSession(
                    id: name, uid: "uid-1", family: "family-\(name)", deviceName: nil, network: nil, method: "emailLink",
                    createdAt: expiresAt - 86_400, lastUsedAt: expiresAt - 86_400, expiresAt: expiresAt))
            }
            // Activity: at the horizon (goes), a second after (stays); its method names it here.
            for (name, at) in [("activity-old", horizon(.accountActivity)), ("activity-recent", horizon(.accountActivity) + 1)] {
                try tx.recordActivity(ActivityEntry(uid: "uid-1", at: at, kind: "signIn", method: name))
            }
        }
        try store.write { tx in
            try tx.enqueueWebhook(
                webhookID: "webhook-queued", eventType: "user.deleted", body: "{}", endpoints: ["https://hooks.example.com"],
                now: now - 90 * 86_400, giveUpAt: now + 86_400)
        }
    }

    /// Which of the seeded client buckets still hold their time: a request a minute before the
    /// horizon at 1 a minute is refused while the row is there (a write, as ``rateEventKept``).
    public static func clientBucketsKept(_ store: any Store) throws -> Set<String> {
        try store.write { tx in
            var kept: Set<String> = []
            for name in ["client-old", "client-recent"] {
                let at = RetentionPolicy().horizon(for: .clientRate, now: now) * 1_000_000 - 60_000_000
                if try tx.takeClientTokens(bucket: Array(name.utf8), now: at, allowed: 1, window: 60_000_000, upTo: 1).granted == 0 {
                    kept.insert(name)
                }
            }
            return kept
        }
    }

    /// Which of the seeded rows are still there.
    public static func survivors(_ store: any Store) throws -> Set<String> {
        try store.read { tx in
            var found: Set<String> = []
            for name in ["request-old", "request-live"] where try tx.actionRequest(id: name) != nil { found.insert(name) }
            for name in ["code-old", "code-live"] where try tx.isConsumed(nonce: Array(name.utf8)) { found.insert(name) }
            for name in ["token-old", "token-live", "token-rotated"] where try tx.refreshToken(hash: SHA256.hash(Array(name.utf8))) != nil {
                found.insert(name)
            }
            for name in ["guess-old", "guess-recent"] where try tx.guessRecord(bucket: Array(name.utf8)) != nil { found.insert(name) }
            for message in try tx.outboxMessages(state: .sent, limit: 10) {
                if case .passwordChanged(let uid) = message.intent { found.insert(uid) }
            }
            for delivery in try tx.webhookDeliveries(state: .sent, limit: 10) { found.insert(delivery.webhookID) }
            for attempt in try tx.outboxAttempts(messageID: 999) { found.insert(attempt.reply) }
            for message in try tx.smsMessages(state: .sent, limit: 10) {
                if case .test(let reference) = message.intent { found.insert(reference) }
            }
            for name in ["phone-old", "phone-live"] where try tx.phoneClaim(id: name) != nil { found.insert(name) }
            for name in ["signin-old", "signin-live"] where try tx.phoneSignIn(requestID: name) != nil { found.insert(name) }
            for name in ["oidc-old", "oidc-live"] where try tx.authorizationCode(hash: SHA256.hash(Array(name.utf8))) != nil {
                found.insert(name)
            }
            for name in ["oidc-request-old", "oidc-request-live"] where try tx.oidcPendingRequest(id: name) != nil { found.insert(name) }
            for name in ["oidc-session-old", "oidc-session-live"] where try tx.oidcBrowserSession(hash: SHA256.hash(Array(name.utf8))) != nil {
                found.insert(name)
            }
            for name in ["session-old", "session-live"] where try tx.deviceSession(id: name) != nil { found.insert(name) }
            for entry in try tx.activity(uid: "uid-1", after: nil, limit: 10) { if let name = entry.method { found.insert(name) } }
            return found
        }
    }

    /// Whether `bucket` still holds an event (an interval of 10 years refuses while one is there).
    public static func rateEventKept(_ store: any Store, _ name: String) throws -> Bool {
        try store.write { tx in
            try tx.rateLimit(bucket: Array(name.utf8), now: now, interval: 10 * 365 * 86_400, perHour: 0) != nil
        }
    }
}

