extension Schema {
    /// The outbox and the suppression list.
    ///
    /// `next_attempt_at` is when a queued or retrying message is due and, while it is claimed, when
    /// its lease ends: so one index finds every claimable message, including those of dead workers.
    /// The body and the envelope are stored once composed (retries send the same message) and
    /// erased when the message is sent or dead. One index only: every other index would be
    /// rewritten on each claim and each outcome, the hottest writes; releasing leases and purging are
    /// rare and may scan.
    static let outboxMigration = """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            intent TEXT NOT NULL,
            recipient_local TEXT NOT NULL,
            recipient_domain TEXT NOT NULL,
            recipient_normalized TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'claimed', 'retrying', 'sent', 'dead')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_owner TEXT,
            created_at INTEGER NOT NULL,
            give_up_at INTEGER NOT NULL,
            finished_at INTEGER,
            last_reply TEXT,
            message_id TEXT,
            envelope_sender TEXT,
            envelope_recipients TEXT,
            body BLOB
        );
        CREATE INDEX outbox_due ON outbox(next_attempt_at) WHERE state IN ('queued', 'retrying', 'claimed');
        CREATE TABLE suppressions (
            address TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
}
