extension Schema {
    /// The outbox and the suppression list.
    static let outboxMigration = """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            intent TEXT NOT NULL,
            recipient TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_owner TEXT,
            lease_until INTEGER,
            body BLOB,
            last_reply TEXT,
            created_at INTEGER NOT NULL,
            give_up_at INTEGER NOT NULL,
            finished_at INTEGER
        );
        CREATE INDEX outbox_due ON outbox(state, next_attempt_at);
        CREATE TABLE suppressions (
            address TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        """
}
