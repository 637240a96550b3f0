import Foundation
import PosternCrypto

/// What the content stage decided a queued intent's mail says.
public struct ComposedMail: Sendable, Hashable {
    /// The message kind and its values (links with live codes).
    public var message: MailMessage
    /// Locale preferences in order: the request's, the account's.
    public var localePreferences: [String?]
}

/// The outbox's content stage, run by a worker the first time it claims a message: looks the
/// address up, mints the code and picks the mail. Only here does the service learn whether an
/// address has an account, after the request has answered.
public final class MailComposer: Sendable {
    /// What the content stage's reads use (the compiler holds it to them): a mail is made from
    /// its request, its account and, for a phone notice, the claim.
    typealias Reads = any AccountReader & ActionRequestReader & PhoneReader
    /// What composing a sign-up's or a reset's mail writes (its request), beside those reads.
    typealias Writes = any ActionRequestWriter & AccountReader & PhoneReader

    let context: FlowContext
    let ledger: ActionLedger

    init(context: FlowContext, ledger: ActionLedger) {
        self.context = context
        self.ledger = ledger
    }

    /// The content stage, run by the outbox worker the first time it claims a message: looks the
    /// address up, mints the code, and picks the mail — sign-in vs confirm-sign-up vs
    /// account-already-exists, a reset vs nothing (or no-account). Nil means nothing is to be sent
    /// (the request expired or was used, the account is gone, a reset for an unknown address).
    /// - Throws: `AuthError` when the store or the random generator fails (the worker retries).
    public func compose(_ intent: MailIntent, recipient: EmailAddress) throws(AuthError) -> ComposedMail? {
        try compose([(intent, recipient)])[0].get()
    }

    /// The content stage for a worker's batch, each result in the order asked. The intents that
    /// only read are composed in one read transaction: one per message was most of what composing
    /// cost the store (each began on a page cache that the writer's commits had emptied, so every
    /// lookup read its pages again: 3.6 reads and 2.6 lock calls a message in a drain). One that
    /// fails fails alone; a sign-up or a reset, which changes its request, is a write of its own.
    public func compose(_ items: [(intent: MailIntent, recipient: EmailAddress)]) -> [Result<ComposedMail?, AuthError>] {
        var read: [Int: Result<ComposedMail?, AuthError>] = [:]
        let reading = items.indices.filter { !Self.changesRequest(items[$0].intent) }
        if !reading.isEmpty {
            let bodies = reading.map { body(items[$0].intent, recipient: items[$0].recipient) }
            let batch = reading.map { items[$0] }
            do {
                let composed = try context.read { (tx: Reads) in
                    let prefetched = Prefetched(batch, tx: tx)
                    return bodies.map { body in Result { () throws(AuthError) in
                        do { return try body(tx, nil, prefetched) } catch { throw FlowContext.readFailure(error) }
                    } }
                }
                for (index, result) in zip(reading, composed) { read[index] = result }
            } catch {
                for index in reading { read[index] = .failure(error) }
            }
        }
        return items.indices.map { index in
            if let result = read[index] { return result }
            let body = body(items[index].intent, recipient: items[index].recipient)
            return Result { () throws(AuthError) in try context.write { (tx: Writes) in try body(tx, tx, Prefetched()) } }
        }
    }

    /// Only a sign-up of a taken address and a reset change their request; the other intents
    /// compose from a snapshot, which keeps the single store writer free for requests.
    private static func changesRequest(_ intent: MailIntent) -> Bool {
        switch intent {
        case .signUp, .resetPassword: true
        default: false
        }
    }

    /// What a batch's mails read, read for all of them at once in the batch's transaction: its
    /// requests by id, then the accounts of their addresses and of the recipients (two statements
    /// a batch where there were two a mail). What was not read ahead is read when asked for.
    struct Prefetched {
        private var requests: [String: ActionRequest] = [:]
        private var requestsRead: Set<String> = []
        private var holders: [String: Account] = [:]
        private var holdersRead: Set<String> = []

        /// Nothing read ahead.
        init() {}

        /// Reads ahead for `items`. A batch read that fails (a row that cannot be read back) leaves
        /// its rows to be read one by one, so that only the message whose row it is fails.
        init(_ items: [(intent: MailIntent, recipient: EmailAddress)], tx: Reads) {
            let ids = items.compactMap { $0.intent.requestID }
            if !ids.isEmpty, let found = try? tx.actionRequests(ids: ids) {
                requests = found
                requestsRead = Set(ids)
            }
            let addresses = items.map(\.recipient) + requests.values.map(\.email)
            if let found = try? tx.accounts(addresses: addresses) {
                holders = found
                holdersRead = Set(addresses.map(\.normalized))
            }
        }

        func request(_ id: String, tx: Reads) throws -> ActionRequest? {
            requestsRead.contains(id) ? requests[id] : try tx.actionRequest(id: id)
        }

        func holder(of address: EmailAddress, tx: Reads) throws -> Account? {
            holdersRead.contains(address.normalized) ? holders[address.normalized] : try tx.account(address: address)
        }
    }

    /// What composing `intent` does within a transaction: a writer is given when it
    /// ``changesRequest(_:)``.
    private func body(
        _ intent: MailIntent, recipient: EmailAddress
    ) -> @Sendable (Reads, Writes?, Prefetched) throws -> ComposedMail? {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let config = context.config
        let requestedAt = context.clock.now()
        let ledger = self.ledger
        return { tx, writer, prefetched in
            func save(_ request: ActionRequest) throws {
                guard let writer else { throw AuthError.internalError("the content stage needs a write transaction") }
                try writer.updateActionRequest(request)
            }
            switch intent {
            case .signInApproved(let device):
                let holder = try prefetched.holder(of: recipient, tx: tx)
                return ComposedMail(
                    message: MailMessage(content: .signInApproved(device: device), recipient: recipient, requestedAt: requestedAt,
                                         displayName: holder?.displayName),
                    localePreferences: [holder?.locale])
            case .newSignIn(let device):
                let holder = try prefetched.holder(of: recipient, tx: tx)
                return ComposedMail(
                    message: MailMessage(content: .newSignIn(device: device), recipient: recipient, requestedAt: requestedAt,
                                         displayName: holder?.displayName),
                    localePreferences: [holder?.locale])
            case .phoneTransferRequested(let claimID):
                // The claim still waiting, and the recipient still the holder's owner.
                guard let claim = try tx.phoneClaim(id: claimID), let from = claim.transferFrom, let dueAt = claim.transferDueAt,
                    claim.verifiedAt == nil, let holder = try tx.account(uid: from), holder.email == recipient
                else { return nil }
                return ComposedMail(
                    message: MailMessage(
                        content: .phoneTransferRequested(phoneNumber: claim.redactedNumber, movesAt: Date(timeIntervalSince1970: TimeInterval(dueAt))),
                        recipient: recipient, requestedAt: requestedAt, displayName: holder.displayName),
                    localePreferences: [holder.locale])
            case .passwordChanged(let uid):
                guard let account = try tx.account(uid: uid), let email = account.email else { return nil }
                return ComposedMail(
                    message: MailMessage(content: .passwordChanged(resetLink: nil), recipient: email, requestedAt: requestedAt,
                                         displayName: account.displayName),
                    localePreferences: [account.locale])
            case .signIn(let id), .signUp(let id), .resetPassword(let id), .verifyEmail(let id), .changeEmail(let id),
                .recoverEmail(let id), .invitation(let id):
                guard var request = try prefetched.request(id, tx: tx), ledger.life(request).isOpen(now: now) else {
                    return nil
                }
                let holder = try prefetched.holder(of: request.email, tx: tx)
                let preferences = [request.locale, holder?.locale]
                let expiresAt = Date(timeIntervalSince1970: TimeInterval(request.expiresAt))
                func mint() throws -> String? {
                    try ledger.mintLink(for: request, ring: ring, now: now, tx: tx)?.link
                }
                // Sign-up policy, decided here (after the request answered, as every address is):
                // an address that may not sign up gets no link, or the notice.
                if request.purpose == .signIn || request.purpose == .signUp,
                    try config.signUp.refusesMail(
                        for: request, holder: holder, asker: try request.uid.flatMap { try tx.account(uid: $0) }, tx: tx, now: now)
                {
                    guard config.signUp.closedNotice else { return nil }
                    return ComposedMail(
                        message: MailMessage(content: .signUpClosed, recipient: request.email, requestedAt: requestedAt),
                        localePreferences: preferences)
                }
                let content: MailContent
                switch request.purpose {
                case .invitation:
                    // An account was made for the address since: it signs in as any other.
                    guard holder == nil, let link = try mint() else { return nil }
                    content = .invitation(link: link, expiresAt: expiresAt)
                case .signIn:
                    // The 6-digit code's key was fixed when the request was recorded.
                    guard let link = try mint(), let keyID = request.sixDigitKeyID,
                        let digits = ActionLedger.sixDigitCode(requestID: request.id, keyID: keyID, ring: ring)
                    else { return nil }
                    content = .signIn(link: link, code: digits, expiresAt: expiresAt)
                case .signUp:
                    if holder != nil {
                        // Never a second account: the link signs in to the existing one, password unchanged.
                        request.passwordHash = nil
                        try save(request)
                        guard let link = try mint() else { return nil }
                        content = .accountAlreadyExists(signInLink: link, expiresAt: expiresAt, resetLink: nil)
                    } else {
                        guard let link = try mint() else { return nil }
                        content = .confirmSignUp(link: link, expiresAt: expiresAt)
                    }
                case .resetPassword:
                    guard let holder else {
                        return config.sendNoAccountMail
                            ? ComposedMail(
                                message: MailMessage(content: .noAccount(signUpLink: nil), recipient: request.email,
                                                     requestedAt: requestedAt),
                                localePreferences: preferences)
                            : nil
                    }
                    request.uid = holder.uid
                    try save(request)
                    guard let link = try mint() else { return nil }
                    content = .resetPassword(link: link, expiresAt: expiresAt)
                case .verifyEmail:
                    guard let link = try mint() else { return nil }
                    content = .verifyEmail(link: link, expiresAt: expiresAt)
                case .changeEmail:
                    guard let old = request.otherEmail, let link = try mint() else { return nil }
                    content = .verifyAndChangeEmail(link: link, expiresAt: expiresAt, oldEmail: old, newEmail: request.email)
                case .recoverEmail:
                    guard let moved = request.otherEmail, let link = try mint() else { return nil }
                    content = .recoverEmail(link: link, expiresAt: expiresAt, oldEmail: request.email, newEmail: moved)
                }
                return ComposedMail(
                    message: MailMessage(content: content, recipient: request.email, requestedAt: requestedAt,
                                         displayName: holder?.displayName),
                    localePreferences: preferences)
            }
        }
    }
}

/// Builds action links: `{public-url}/action?mode=…&oobCode=…[&continueUrl=…][&lang=…]`.
struct LinkMaker: Sendable {
    let publicURL: String

    func link(mode: EmailAction, code: String, continueURL: String?, lang: String?) -> String {
        var link = "\(publicURL)/action?mode=\(mode.rawValue)&oobCode=\(code)"
        if let continueURL { link += "&continueUrl=" + Self.escape(continueURL) }
        if let lang { link += "&lang=" + Self.escape(lang) }
        return link
    }

    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
