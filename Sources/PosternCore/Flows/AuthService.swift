import Foundation
import PosternCrypto

/// The flows' one entry point for the daemon's endpoints and the CLI: a thin facade over the
/// concepts, each its own type — email-link sign-in (`EmailLinkFlow`), passwords
/// (`PasswordFlow`), links that act on an address (`AddressFlow`), the user's own profile
/// (`ProfileFlow`), sessions (`SessionFlow`), the action-request ledger (`ActionLedger`), the
/// outbox's content stage (`MailComposer`) and operator tools (`OperatorTools`). Request paths do
/// constant work and only record; what a mail says is decided later by `composeMail`.
///
/// Every method is synchronous and thread-safe; state changes run in one store transaction each.
public final class AuthService: Sendable {
    let context: FlowContext
    let ledger: ActionLedger
    let sessions: SessionFlow
    let emailLink: EmailLinkFlow
    let passwords: PasswordFlow
    let addresses: AddressFlow
    let profiles: ProfileFlow
    let composer: MailComposer
    let operators: OperatorTools
    let bounces: BounceIntake
    let clients: ClientLimit
    let adminGuesses: ClientLimit
    let phoneSettlement: PhoneSettlement
    let phoneOwner: PhoneOwnerFlow
    let phoneHolder: PhoneHolderFlow
    let phoneOperator: PhoneOperatorTools
    let phoneClaimSMS: PhoneClaimSMS
    let phoneSignIn: PhoneSignInFlow
    /// Code requests recorded, codes consumed and codes refused.
    public var metrics: CodeMetrics { context.metrics }
    /// SMS queued, sent and dead by country code, and the caps hit.
    public var smsMetrics: SMSMetrics { context.smsMetrics }
    /// The toll-fraud gate every SMS passes (``SMSAdmission``).
    public var smsAdmission: SMSAdmission { context.smsAdmission }

    /// Creates the service.
    /// - Throws: `AuthError` when the public URL or allowed hosts are unusable, or hashing fails.
    public init(
        store: any Store, keys: KeyRingCache, clock: any WallClock, config: AuthConfiguration,
        hasher: PasswordHasher = .standard, logger: Logger? = nil
    ) throws(AuthError) {
        context = try FlowContext(
            store: store, keys: keys, clock: clock, config: config, hasher: hasher, metrics: CodeMetrics(), logger: logger)
        ledger = ActionLedger(context: context)
        sessions = SessionFlow(context: context)
        emailLink = EmailLinkFlow(context: context, ledger: ledger, sessions: sessions)
        passwords = try PasswordFlow(context: context, ledger: ledger, sessions: sessions)
        addresses = AddressFlow(context: context, ledger: ledger, sessions: sessions)
        profiles = ProfileFlow(context: context, sessions: sessions)
        composer = MailComposer(context: context, ledger: ledger)
        operators = OperatorTools(context: context, ledger: ledger)
        bounces = BounceIntake(context: context)
        clients = ClientLimit(context: context, allowed: config.ipPerMinute)
        adminGuesses = ClientLimit(
            context: context, allowed: config.adminTokenGuesses, window: AdminTokenBudget.windowSeconds * 1000,
            label: "postern-admin-token")
        phoneSettlement = PhoneSettlement(context: context)
        let claiming = PhoneClaiming(context: context, settlement: phoneSettlement)
        phoneOwner = PhoneOwnerFlow(context: context, sessions: sessions, claiming: claiming)
        phoneHolder = PhoneHolderFlow(context: context, sessions: sessions, claiming: claiming)
        phoneOperator = PhoneOperatorTools(context: context, claiming: claiming)
        phoneClaimSMS = PhoneClaimSMS(context: context, settlement: phoneSettlement)
        phoneSignIn = PhoneSignInFlow(context: context, sessions: sessions, settlement: phoneSettlement)
    }

    // MARK: the per-client limit (ClientLimit)

    /// Counts one public request of the client at `ip` against `--ip-per-minute`, in the store
    /// every daemon shares.
    /// - Throws: `tooManyAttempts` past the limit; `unavailable` when the store cannot count.
    public func admitClient(ip: String) throws(AuthError) { try clients.admit(ip: ip) }

    // MARK: the admin token's guess budget (AdminTokenBudget)

    /// Refuses an admin request from `ip` while its wrong tokens are over ``AdminTokenBudget``,
    /// before its token is looked at; counts nothing.
    /// - Throws: `tooManyAttempts` while over; `unavailable` when the store cannot be read.
    public func admitAdminAttempt(ip: String) throws(AuthError) { try adminGuesses.refusal(ip: ip) }

    /// Counts one wrong admin token from `ip` against ``AdminTokenBudget``.
    /// - Throws: `tooManyAttempts` when this one is past the budget (it is then not counted);
    ///   `unavailable` when the store cannot count.
    public func countWrongAdminToken(ip: String) throws(AuthError) { try adminGuesses.admit(ip: ip) }

    // MARK: email link (EmailLinkFlow)

    /// Records a sign-in request and queues its mail; the same answer for every address.
    /// - Throws: `AuthError` for malformed input, `tooManyAttempts` past the per-address limit.
    /// Returns the number the asking device shows when `input` asks for an approval.
    @discardableResult
    public func sendEmailLink(_ input: EmailLinkRequest) throws(AuthError) -> Int? { try emailLink.send(input) }

    /// ``sendEmailLink(_:)`` handing its answer to `then` once the request is committed: on the
    /// store's writer thread when ``answersFromCommit``, else before it returns. Malformed input
    /// is thrown at once, and `then` is not called.
    public func sendEmailLink(_ input: EmailLinkRequest, then: @escaping @Sendable (Result<Int?, AuthError>) -> Void) throws(AuthError) {
        try emailLink.send(input, then: then)
    }

    /// Whether the `then:` variants answer from the writer's commit without blocking the caller
    /// (see `FlowContext.answersFromCommit`): the HTTP server may then call them from its polling
    /// threads instead of a thread that waits.
    public var answersFromCommit: Bool { emailLink.context.answersFromCommit }

    /// The question the sign-in link's page asks before an approval, nil for a plain link.
    public func approvalPrompt(oobCode: String) throws(AuthError) -> ApprovalPrompt? {
        try emailLink.approvalPrompt(oobCode: oobCode)
    }

    /// The owner picked `number` on the sign-in link's page.
    public func pickApproval(oobCode: String, number: Int) throws(AuthError) -> ApprovalOutcome {
        try emailLink.pickApproval(oobCode: oobCode, number: number)
    }

    /// The session for the device waiting on `codeVerifier`, once approved; nil while it waits.
    public func approvalResult(email: String, codeVerifier: String, idToken: String?, allowMigration: Bool?) throws(AuthError) -> LoginDescriptor? {
        try emailLink.approvalResult(email: email, codeVerifier: codeVerifier, idToken: idToken, allowMigration: allowMigration)
    }

    /// Completes an email-link sign-in (or a sign-up's confirmation), resolving API.md's six cases.
    /// - Throws: `AuthError` (see `EmailLinkFlow.complete`).
    public func completeEmailLink(_ input: EmailLinkCompletion) throws(AuthError) -> LoginDescriptor {
        try emailLink.complete(input)
    }

    // MARK: passwords (PasswordFlow)

    /// Verify-first sign-up; the password applies only when confirmed on this device.
    /// - Throws: `AuthError.weakPassword`, `invalidEmail`, `tooManyAttempts`.
    public func signUp(
        email: String, password: String, idToken: String?, continueURL: String?, locale: String?,
        codeChallenge: String? = nil
    ) throws(AuthError) {
        try passwords.signUp(
            email: email, password: password, idToken: idToken, continueURL: continueURL, locale: locale,
            codeChallenge: codeChallenge)
    }

    /// Password sign-in within the address's guess budget.
    /// - Throws: `AuthError` (see `PasswordFlow.signIn`).
    public func signInWithPassword(
        email: String, password: String, idToken: String?, allowMigration: Bool?
    ) throws(AuthError) -> LoginDescriptor {
        try passwords.signIn(email: email, password: password, idToken: idToken, allowMigration: allowMigration)
    }

    /// Asks for a reset link; 202 for every address.
    /// - Throws: `AuthError.invalidEmail`, `invalidContinueURL`, `tooManyAttempts`.
    public func requestPasswordReset(email: String, continueURL: String?, locale: String?) throws(AuthError) {
        try passwords.requestReset(email: email, continueURL: continueURL, locale: locale)
    }

    /// ``requestPasswordReset(email:continueURL:locale:)`` handing its outcome to `then` once the
    /// request is committed (as ``sendEmailLink(_:then:)``). Malformed input is thrown at once, and
    /// `then` is not called.
    public func requestPasswordReset(
        email: String, continueURL: String?, locale: String?, then: @escaping @Sendable (Result<Void, AuthError>) -> Void
    ) throws(AuthError) {
        try passwords.requestReset(email: email, continueURL: continueURL, locale: locale, then: then)
    }

    /// Sets the password of a recently signed-in account.
    /// - Throws: `AuthError.requiresRecentLogin`, `weakPassword`, `invalidIDToken`.
    public func setPassword(idToken: String, password: String) throws(AuthError) -> Session {
        try passwords.setPassword(idToken: idToken, password: password)
    }

    // MARK: links that act on an address (AddressFlow)

    /// Says what a link is, consuming nothing.
    /// - Throws: `AuthError` (`INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, an unusable link).
    public func inspectAction(link: String?, oobCode: String?) throws(AuthError) -> ActionInfo {
        try addresses.inspect(link: link, oobCode: oobCode)
    }

    /// Applies a reset, verification, address change or recovery link.
    /// - Throws: `AuthError` (see `AddressFlow.apply`).
    public func applyAction(link: String?, oobCode: String?, newPassword: String?) throws(AuthError) -> AppliedAction {
        try addresses.apply(link: link, oobCode: oobCode, newPassword: newPassword)
    }

    /// Asks for a verification link to the signed-in account's address.
    /// - Throws: `AuthError.invalidIDToken`, `invalidArgument`, `tooManyAttempts`.
    public func requestEmailVerification(idToken: String, continueURL: String?) throws(AuthError) {
        try addresses.requestVerification(idToken: idToken, continueURL: continueURL)
    }

    /// Asks to move a recently signed-in account to `newEmail`.
    /// - Throws: `AuthError.requiresRecentLogin`, `invalidEmail`, `tooManyAttempts`.
    public func requestEmailChange(idToken: String, newEmail: String, continueURL: String?) throws(AuthError) {
        try addresses.requestChange(idToken: idToken, newEmail: newEmail, continueURL: continueURL)
    }

    // MARK: sessions (SessionFlow)

    /// Creates an anonymous account and signs it in.
    /// - Throws: `AuthError` (503 when the store is down).
    public func signInAnonymously() throws(AuthError) -> Session { try sessions.signInAnonymously() }

    /// Verifies an ID token and its account.
    /// - Throws: `AuthError.invalidIDToken`, `userDisabled`.
    public func verifyIDToken(_ token: String) throws(AuthError) -> (account: Account, claims: IDTokenClaims) {
        try sessions.verifyIDToken(token)
    }

    /// Verifies an ID token whose sign-in is recent.
    /// - Throws: `AuthError.requiresRecentLogin` and the errors of `verifyIDToken`.
    public func verifyRecentSignIn(_ token: String) throws(AuthError) -> (account: Account, claims: IDTokenClaims) {
        try sessions.verifyRecentSignIn(token)
    }

    /// Exchanges a refresh token for a new session.
    /// - Throws: `AuthError.tokenRevoked`, `invalidRefreshToken`, `userDisabled`.
    public func refresh(_ token: String) throws(AuthError) -> Session { try sessions.refresh(token) }

    /// Revokes a refresh token's family.
    /// - Throws: `AuthError.unavailable`.
    public func signOut(refreshToken: String) throws(AuthError) { try sessions.signOut(refreshToken: refreshToken) }

    // MARK: the user's own account (ProfileFlow)

    /// The signed-in user's record.
    /// - Throws: `AuthError.invalidIDToken`.
    public func me(idToken: String) throws(AuthError) -> UserRecord { try profiles.me(idToken: idToken) }

    /// Changes the display name and/or the app-owned attributes.
    /// - Throws: `AuthError.invalidArgument`, `invalidIDToken`.
    public func updateProfile(idToken: String, displayName: String??, attributes: String?) throws(AuthError) -> UserRecord {
        try profiles.update(idToken: idToken, displayName: displayName, attributes: attributes)
    }

    /// Deletes the signed-in account (recent sign-in).
    /// - Throws: `AuthError.requiresRecentLogin`, `invalidIDToken`.
    public func deleteAccount(idToken: String) throws(AuthError) { try profiles.delete(idToken: idToken) }

    // MARK: the ledger (ActionLedger) and the content stage (MailComposer)

    /// What a pasted text holds (a link, a bare oobCode, or 6 digits), consuming nothing.
    /// - Throws: `AuthError.invalidCode` with a reason a person can act on.
    public func readPasted(_ text: String) throws(AuthError) -> PastedAction {
        try ledger.codeInput(link: text, oobCode: nil, code: nil)
    }

    /// Where the sign-in link `oobCode` stands for the browser holding `browserVerifier` (its
    /// `postern_browser` cookie): bound or not, this browser or another, used or not. Nil for a
    /// code that is not genuine, not a sign-in code, or names no request. Reads only.
    public func browserCheck(oobCode: String, browserVerifier: String?) -> BrowserCheck? {
        try? ledger.context.read { tx in try self.ledger.browserCheck(oobCode, verifier: browserVerifier, tx: tx) } ?? nil
    }

    /// The 6-digit code the hosted page shows for a valid sign-in link; nil for a PKCE link.
    public func sixDigitCode(forSignInCode text: String) -> String? { ledger.sixDigitCode(forSignInCode: text) }

    /// The content stage of the outbox: what a queued intent's mail says, or nil for nothing.
    /// - Throws: `AuthError` when the store or the random generator fails (the worker retries).
    public func composeMail(_ intent: MailIntent, recipient: EmailAddress) throws(AuthError) -> ComposedMail? {
        try composer.compose(intent, recipient: recipient)
    }

    /// The content stage for a batch (an outbox worker's claim): ``composeMail(_:recipient:)`` of
    /// each, in order, those that only read in one read transaction. A failure is that message's alone.
    public func composeMails(_ items: [(intent: MailIntent, recipient: EmailAddress)]) -> [Result<ComposedMail?, AuthError>] {
        composer.compose(items)
    }

    // MARK: phone numbers by consent of both parties (PhoneOwnerFlow, PhoneHolderFlow, PhoneSettlement)

    /// The owner (recent sign-in) asks to add a number: an SMS code goes to it. The same answer
    /// for every number.
    /// - Throws: `requiresRecentLogin`, `invalidPhoneNumber`, the SMS caps' refusals.
    public func addPhone(idToken: String, phoneNumber: String, locale: String?, clientIP: String?) throws(AuthError) -> PhoneClaimView {
        try phoneOwner.add(idToken: idToken, phoneNumber: phoneNumber, locale: locale, clientIP: clientIP)
    }

    /// The number's holder writes a claim for the account of `email`, unapproved (any session).
    /// - Throws: `invalidIDToken`, `invalidEmail`, `invalidPhoneNumber`, the SMS caps' refusals.
    public func startPhoneClaim(idToken: String, phoneNumber: String, email: String, locale: String?, clientIP: String?) throws(AuthError)
        -> PhoneClaimView
    {
        try phoneHolder.start(idToken: idToken, phoneNumber: phoneNumber, email: email, locale: locale, clientIP: clientIP)
    }

    /// Settles up to `limit` phone transfers whose cool-off is over (the daemon's housekeeping
    /// calls it each round): how many numbers moved, and how many claims could not be settled
    /// (each in its own write; the others move).
    /// - Throws: `AuthError.unavailable` when the due claims cannot be read.
    public func settleDuePhoneTransfers(limit: Int = 100) throws(AuthError) -> (moved: Int, failed: Int) {
        try phoneSettlement.settleDueTransfers(limit: limit)
    }

    /// The signed-in account's claims, settling transfers that are due.
    public func phoneClaims(idToken: String) throws(AuthError) -> [PhoneClaimView] { try phoneOwner.list(idToken: idToken) }

    /// The code typed into the owner's session.
    /// - Throws: `invalidPhoneCode`, `phoneClaimNotFound`.
    public func provePhoneAsOwner(idToken: String, claimID: String, code: String) throws(AuthError) -> PhoneProof {
        try phoneOwner.prove(idToken: idToken, claimID: claimID, code: code)
    }

    /// The owner approves a claim the holder proved first (recent sign-in).
    public func approvePhoneClaim(idToken: String, claimID: String) throws(AuthError) -> PhoneProof {
        try phoneOwner.approve(idToken: idToken, claimID: claimID)
    }

    /// The owner of a held number lets it go to the claim waiting for it (recent sign-in).
    public func releasePhone(idToken: String, claimID: String) throws(AuthError) { try phoneOwner.release(idToken: idToken, claimID: claimID) }

    /// The owner of a held number objects to the claims waiting for it.
    public func objectToPhoneTransfer(idToken: String, claimID: String) throws(AuthError) { try phoneOwner.object(idToken: idToken, claimID: claimID) }

    /// The owner deletes a claim.
    public func deletePhoneClaim(idToken: String, claimID: String) throws(AuthError) {
        try phoneOwner.delete(idToken: idToken, claimID: claimID)
    }

    /// The holder proves the number with the code.
    /// - Throws: `invalidPhoneCode` for every failure.
    public func provePhoneAsHolder(claimID: String, code: String) throws(AuthError) -> PhoneProof {
        try phoneHolder.prove(claimID: claimID, code: code)
    }

    /// The holder reads the claim its code proves.
    public func readPhoneClaimAsHolder(claimID: String, code: String) throws(AuthError) -> PhoneClaimView {
        try phoneHolder.read(claimID: claimID, code: code)
    }

    /// The holder deletes the claim its code proves.
    public func deletePhoneClaimAsHolder(claimID: String, code: String) throws(AuthError) {
        try phoneHolder.delete(claimID: claimID, code: code)
    }

    // MARK: sign-in by phone (PhoneSignInFlow, --phone-sign-in)

    /// Queues a sign-in code by SMS to `phoneNumber`: the same answer for every number.
    /// - Throws: `phoneSignInDisabled` without `--phone-sign-in`, `invalidPhoneNumber`,
    ///   `invalidIDToken`, `smsCountryNotAllowed`, `tooManyAttempts` past the SMS caps.
    public func sendPhoneSignIn(phoneNumber: String, locale: String?, idToken: String?, clientIP: String?) throws(AuthError) {
        try phoneSignIn.send(phoneNumber: phoneNumber, locale: locale, idToken: idToken, clientIP: clientIP)
    }

    /// Signs in with the SMS code, resolving the email link's six cases for the number's holder.
    /// - Throws: `phoneSignInDisabled`, `invalidPhoneNumber`, `invalidPhoneCode`, `invalidIDToken`,
    ///   `migrationRequired`, `credentialAlreadyInUse`, `userDisabled`.
    public func completePhoneSignIn(phoneNumber: String, code: String, idToken: String?, allowMigration: Bool?) throws(AuthError)
        -> LoginDescriptor
    {
        try phoneSignIn.complete(phoneNumber: phoneNumber, code: code, idToken: idToken, allowMigration: allowMigration)
    }

    /// An account's phone claims, for an operator (`postern phones show`).
    /// - Throws: `AuthError.unavailable`.
    public func phoneClaims(uid: String) throws(AuthError) -> [PhoneClaimView] { try phoneOperator.list(uid: uid) }

    /// Removes a phone claim, for an operator (`postern phones remove`); false when there is none.
    /// - Throws: `AuthError.unavailable`.
    public func removePhoneClaim(claimID: String) throws(AuthError) -> Bool { try phoneOperator.remove(claimID: claimID) }

    // MARK: operators (OperatorTools)

    /// The actions an operator may make links for, by their command-line names.
    public static var issuableActions: [String] { OperatorTools.issuableActions }

    /// Makes a link for an operator, optionally queuing its mail.
    /// - Throws: `AuthError.invalidArgument`, `invalidEmail`, `userNotFound`.
    public func issueLink(
        action: String, email: String, continueURL: String?, locale: String?, queue: Bool
    ) throws(AuthError) -> IssuedLink {
        try operators.issueLink(action: action, email: email, continueURL: continueURL, locale: locale, queue: queue)
    }

    /// The account holding `email`.
    /// - Throws: `AuthError.invalidEmail`.
    public func user(email: String) throws(AuthError) -> UserRecord? { try operators.user(email: email) }

    /// The account `uid`.
    /// - Throws: `AuthError.unavailable`.
    public func user(uid: String) throws(AuthError) -> UserRecord? { try operators.user(uid: uid) }

    /// Disables, verifies or renames an account.
    /// - Throws: `AuthError.userNotFound`.
    public func updateUser(uid: String, disabled: Bool?, emailVerified: Bool?, displayName: String??) throws(AuthError) -> UserRecord {
        try operators.updateUser(uid: uid, disabled: disabled, emailVerified: emailVerified, displayName: displayName)
    }

    /// Deletes an account.
    /// - Throws: `AuthError.userNotFound`.
    public func deleteUser(uid: String) throws(AuthError) { try operators.deleteUser(uid: uid) }

    /// Outbox metadata (never bodies), newest first.
    /// - Throws: `AuthError.unavailable`.
    public func outboxMessages(state: OutboxState?, limit: Int) throws(AuthError) -> [OutboxMessage] {
        try operators.outboxMessages(state: state, limit: limit)
    }

    /// Message counts by state.
    /// - Throws: `AuthError.unavailable`.
    public func outboxCounts() throws(AuthError) -> OutboxCounts { try operators.outboxCounts() }

    /// Queues a dead message again; false unless it was dead.
    /// - Throws: `AuthError.unavailable`.
    public func retryOutboxMessage(id: Int64) throws(AuthError) -> Bool { try operators.retryOutboxMessage(id: id) }

    /// One message's metadata and its delivery log (every attempt, oldest first); nil when there
    /// is no such message (a purged one may still have its log: then the log alone).
    /// - Throws: `AuthError.unavailable`.
    public func outboxMessage(id: Int64) throws(AuthError) -> (message: OutboxMessage?, attempts: [OutboxAttempt])? {
        let found = try operators.context.read { tx in (try tx.outboxMessage(id: id), try tx.outboxAttempts(messageID: id)) }
        if found.0 == nil && found.1.isEmpty { return nil }
        return (found.0, found.1)
    }

    /// The messages whose delivery log names `email` (by its keyed hash), newest first, at most
    /// `limit`: their ids, and each one's metadata while the outbox still holds it.
    /// - Throws: `AuthError.invalidEmail`, `unavailable`.
    public func outboxMessages(email: String, limit: Int = 100) throws(AuthError) -> [(id: Int64, message: OutboxMessage?)] {
        let address = try operators.context.parseEmail(email)
        let key: DeliveryLogKey
        do { key = try operators.context.keys.vault.deliveryLogKey() } catch { throw .internalError("\(error)") }
        let hash = key.hash(address)
        let found = try operators.context.read { tx in
            try tx.outboxMessageIDs(recipientHash: hash, limit: limit).map { id in (id, try tx.outboxMessage(id: id)) }
        }
        return found.map { (id: $0.0, message: $0.1) }
    }

    /// Webhook deliveries by state.
    /// - Throws: `AuthError.unavailable`.
    public func webhookCounts() throws(AuthError) -> WebhookCounts { try operators.context.read { try $0.webhookCounts() } }

    /// The webhook endpoints: list, add, remove, rotate, test (the CLI and the admin API).
    public var webhookEndpoints: WebhookEndpointVault {
        operators.context.keys.vault.webhookEndpoints(configured: operators.context.config.webhooks)
    }

    /// Deletes finished messages older than `olderThan` seconds.
    /// - Throws: `AuthError.unavailable`.
    public func purgeOutbox(olderThan: Int64) throws(AuthError) -> Int { try operators.purgeOutbox(olderThan: olderThan) }

    // MARK: bounces (BounceIntake)

    /// Delivery reports taken in, by outcome.
    public var bounceMetrics: BounceMetrics { bounces.metrics }

    /// The VERP reverse path for outbox message `id` to `recipient` (`--bounce-address`), or nil
    /// for `--mail-from`'s.
    public func bounceEnvelopeSender(messageID id: Int64, recipient: EmailAddress) -> String? {
        bounces.envelopeSender(messageID: id, recipient: recipient)
    }

    /// Takes in a delivery status notification or abuse report and records it on its message.
    /// - Throws: `AuthError.invalidArgument` when `raw` is not a report.
    public func takeDeliveryReport(_ raw: [UInt8]) throws(AuthError) -> BounceResult { try bounces.take(raw) }
}
