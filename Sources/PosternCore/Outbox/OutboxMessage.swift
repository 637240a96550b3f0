/// Where a message is in its delivery life, as the outbox records it.
public enum OutboxState: String, Sendable, Hashable, CaseIterable, Codable {
    /// Waiting for its first attempt.
    case queued
    /// Held by a worker until its lease ends.
    case claimed
    /// An attempt failed transiently; waiting until `nextAttemptAt`.
    case retrying
    /// Accepted by the server (or nothing had to be sent).
    case sent
    /// Abandoned: a permanent failure, a suppressed address, or its time ran out.
    case dead

    /// True for `sent` and `dead`: nothing more will happen to the message.
    public var isFinished: Bool { self == .sent || self == .dead }
}

/// A message's metadata, as listed by `postern outbox status` and the admin API: never its body.
public struct OutboxMessage: Sendable, Hashable {
    /// The row id.
    public let id: Int64
    /// What the request asked to be mailed.
    public let intent: MailIntent
    /// Who it goes to.
    public let recipient: EmailAddress
    /// Where it is.
    public let state: OutboxState
    /// How many delivery attempts were made.
    public let attempts: Int
    /// When it is due (queued, retrying) or when its lease ends (claimed), in Unix seconds.
    public let nextAttemptAt: Int64
    /// When it was queued.
    public let createdAt: Int64
    /// When an undelivered message is abandoned (for a link: its expiry).
    public let giveUpAt: Int64
    /// When it was sent or abandoned.
    public let finishedAt: Int64?
    /// The server's last reply, or why it was abandoned.
    public let lastReply: String?
    /// The Message-ID of the composed mail, once composed.
    public let messageID: String?
    /// What a delivery report came back to say about it, if one did (``BounceAddress``).
    public var bounce: OutboxBounce?

    /// Creates the metadata record (for stores).
    public init(
        id: Int64, intent: MailIntent, recipient: EmailAddress, state: OutboxState, attempts: Int,
        nextAttemptAt: Int64, createdAt: Int64, giveUpAt: Int64, finishedAt: Int64?, lastReply: String?,
        messageID: String?
    ) {
        self.id = id
        self.intent = intent
        self.recipient = recipient
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.giveUpAt = giveUpAt
        self.finishedAt = finishedAt
        self.lastReply = lastReply
        self.messageID = messageID
    }
}

/// What a delivery report (``DeliveryReport``) said about a sent message.
public struct OutboxBounce: Sendable, Hashable {
    /// What kind of news.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// A permanent failure after the relay took the message (RFC 3464 `failed`, 5.x.x): the
        /// address is suppressed as for an SMTP 5xx.
        case failed
        /// A delay or a soft failure (`delayed`, 4.x.x): recorded, nothing suppressed.
        case delayed
        /// An abuse report (RFC 5965): the recipient called it unwanted; the address is suppressed.
        case complaint
    }

    /// What kind.
    public let kind: Kind
    /// The enhanced status code (`5.1.1`), or the feedback type for a complaint.
    public let status: String
    /// The remote server's words, one line, the recipient's address taken out.
    public let detail: String
    /// When the report was taken in.
    public let at: Int64

    /// Creates the record.
    public init(kind: Kind, status: String, detail: String, at: Int64) {
        self.kind = kind
        self.status = status
        self.detail = detail
        self.at = at
    }

    /// Whether this news may replace `older`: a delay never hides a failure or a complaint.
    public func replaces(_ older: OutboxBounce?) -> Bool {
        guard let older else { return true }
        return kind != .delayed || older.kind == .delayed
    }
}

/// A message a worker holds a lease on: its metadata, and the composed mail once stored.
public struct OutboxClaim: Sendable, Hashable {
    /// The message (state `claimed`, `nextAttemptAt` = the lease's end).
    public let message: OutboxMessage
    /// The mail stored by an earlier attempt; nil on the first claim (compose it, then store it).
    public let mail: OutgoingMail?
    /// Whether the recipient is on the suppression list.
    public let isSuppressed: Bool

    /// Creates a claim (for stores).
    public init(message: OutboxMessage, mail: OutgoingMail?, isSuppressed: Bool) {
        self.message = message
        self.mail = mail
        self.isSuppressed = isSuppressed
    }
}

/// How many messages are in each state.
public struct OutboxCounts: Sendable, Hashable, CustomStringConvertible {
    /// Count per state; states without messages are absent.
    public var byState: [OutboxState: Int]

    /// Creates the counts.
    public init(byState: [OutboxState: Int] = [:]) { self.byState = byState }

    /// The count for `state` (0 when absent).
    public subscript(state: OutboxState) -> Int { byState[state] ?? 0 }

    /// Messages that are not yet sent or dead.
    public var unfinished: Int { self[.queued] + self[.claimed] + self[.retrying] }

    /// `queued=N claimed=N retrying=N sent=N dead=N`.
    public var description: String {
        OutboxState.allCases.map { "\($0.rawValue)=\(self[$0])" }.joined(separator: " ")
    }
}

/// A claimed message given back untried, as its delivery machine decided: the state it returns
/// to and when it is due again. Stores write these values; they do not decide them.
public struct OutboxRelease: Sendable, Hashable {
    /// The message.
    public let id: Int64
    /// `queued` or `retrying`.
    public let state: OutboxState
    /// When it is due again, in Unix seconds.
    public let at: Int64

    /// Creates a release.
    public init(id: Int64, state: OutboxState, at: Int64) {
        self.id = id
        self.state = state
        self.at = at
    }
}
