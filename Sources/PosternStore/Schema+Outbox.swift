extension Schema {
    /// The outbox and the suppression list.
    ///
    /// `next_attempt_at` is when a queued or retrying message is due and, while it is claimed, when
    /// its lease ends: so one index finds every claimable message, including those of dead workers.
    /// The body and the envelope are stored when a first attempt fails transiently (retries send
    /// the same message) and erased when the message is sent or dead. One index only: every other index would be
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

extension Schema {
    /// Migration 3 rebuilds the outbox of migration 2 with the same columns and rows, but with a
    /// CHECK and a partial index that SQLite evaluates without a temporary table.
    ///
    /// SQLite evaluates `x IN (a, b, c)` with three or more constants by building an ephemeral
    /// b-tree: a page cache malloc'd and freed on each statement. The CHECK ran that on every
    /// insert and state change, and the index condition ran it twice on every update. Each one
    /// freed enough memory for glibc to hand pages back to the kernel (`madvise`, a TLB shootdown
    /// on every core), on the single writer thread. Measured with `bench/http`, send-link went
    /// from about 6,000 to about 10,000 requests/s. Equality chains and a two-constant `NOT IN`
    /// compile to plain comparisons.
    static let outboxWithoutListsMigration = """
        CREATE TABLE outbox_rebuilt (
            id INTEGER PRIMARY KEY,
            intent TEXT NOT NULL,
            recipient_local TEXT NOT NULL,
            recipient_domain TEXT NOT NULL,
            recipient_normalized TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state = 'queued' OR state = 'claimed' OR state = 'retrying' OR state = 'sent' OR state = 'dead'),
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
        INSERT INTO outbox_rebuilt SELECT id, intent, recipient_local, recipient_domain, recipient_normalized, state,
            attempts, next_attempt_at, lease_owner, created_at, give_up_at, finished_at, last_reply, message_id,
            envelope_sender, envelope_recipients, body FROM outbox;
        DROP TABLE outbox;
        ALTER TABLE outbox_rebuilt RENAME TO outbox;
        CREATE INDEX outbox_due ON outbox(next_attempt_at) WHERE state NOT IN ('sent', 'dead');
        """
}
