import PosternSQL

/// The store's schema as named migrations (``Migration/names``), numbered in order; `PRAGMA
/// user_version` records how many have run. Append new migrations; never edit one that has shipped.
enum Schema {
    static let named: [Migration] = [
        // 1: the foundation's tables.
        Migration("foundation", """
        CREATE TABLE accounts (
            uid TEXT PRIMARY KEY,
            email_verified INTEGER NOT NULL DEFAULT 0,
            password_hash TEXT,
            display_name TEXT,
            attributes TEXT,
            locale TEXT,
            disabled INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_sign_in_at INTEGER,
            providers TEXT NOT NULL DEFAULT '',
            session_version INTEGER NOT NULL DEFAULT 0
        );
        -- A normalized address belongs to at most one account, an account has at most one address.
        CREATE TABLE addresses (
            normalized TEXT PRIMARY KEY,
            local_part TEXT NOT NULL,
            domain TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE REFERENCES accounts(uid) ON DELETE CASCADE
        );
        -- The single-use ledger: SHA-256 of each consumed code's nonce, kept until the code expires.
        CREATE TABLE consumed_codes (
            nonce_hash BLOB PRIMARY KEY,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX consumed_codes_expiry ON consumed_codes(expires_at);
        -- Refresh tokens are stored as SHA-256 hashes; a family is one sign-in's rotation chain.
        CREATE TABLE refresh_tokens (
            token_hash BLOB PRIMARY KEY,
            family TEXT NOT NULL,
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            auth_time INTEGER NOT NULL,
            method TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            rotated_at INTEGER,
            revoked INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX refresh_tokens_family ON refresh_tokens(family);
        CREATE INDEX refresh_tokens_uid ON refresh_tokens(uid);
        -- Requests for emailed actions; the id is also the nonce of the request's one code.
        CREATE TABLE action_requests (
            id TEXT PRIMARY KEY,
            purpose TEXT NOT NULL,
            email TEXT NOT NULL,
            normalized TEXT NOT NULL,
            uid TEXT,
            other_email TEXT,
            password_hash TEXT,
            continue_url TEXT,
            locale TEXT,
            code_challenge TEXT,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            six_digit_key_id INTEGER,
            wrong_tries INTEGER NOT NULL DEFAULT 0,
            consumed_at INTEGER
        );
        CREATE INDEX action_requests_address ON action_requests(normalized, purpose);
        CREATE INDEX action_requests_expiry ON action_requests(expires_at);
        -- One row per event; buckets are keyed hashes, never addresses in the clear.
        CREATE TABLE rate_events (
            bucket BLOB NOT NULL,
            at INTEGER NOT NULL
        );
        CREATE INDEX rate_events_bucket ON rate_events(bucket, at);
        -- Keys: metadata in the clear, the secret sealed (AES-256-GCM) under the master key file.
        CREATE TABLE keys (
            id INTEGER PRIMARY KEY,
            purpose TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            retired_at INTEGER,
            verify_until INTEGER,
            sealed_secret BLOB NOT NULL
        );
        """),
        // 2: the outbox.
        Migration("outbox", outboxMigration),
        // 3: the outbox without IN lists of three or more constants in its constraint and index.
        Migration("outboxWithoutLists", outboxWithoutListsMigration),
        // 4: failed guesses per address and kind (6-digit codes, passwords), one row a bucket.
        Migration("guessBudgets", """
        CREATE TABLE guess_budgets (
            bucket BLOB PRIMARY KEY,
            failures INTEGER NOT NULL,
            last_failure_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
        // 5: approve on your other device: the number the asking device shows, the three the
        // page offers, the device's name, and when the right one was picked.
        Migration("approvalOnOtherDevice", """
        ALTER TABLE action_requests ADD COLUMN approval_number INTEGER;
        ALTER TABLE action_requests ADD COLUMN approval_choices TEXT;
        ALTER TABLE action_requests ADD COLUMN approval_device TEXT;
        ALTER TABLE action_requests ADD COLUMN approved_at INTEGER;
        """),
        // 6: housekeeping deletes refresh tokens by expiry (the other expiring tables had their
        // index already, or are small or scanned oldest first). The switch to incremental vacuum
        // cannot run in a migration's transaction: `SQLiteStore.useIncrementalVacuum` does it.
        Migration("refreshTokensByExpiry", """
        CREATE INDEX refresh_tokens_expiry ON refresh_tokens(expires_at);
        """),
        // 7: webhook deliveries (one row per event and endpoint, the outbox's states, lease and
        // due index) and the endpoints a 410 disabled.
        Migration("webhookDeliveries", """
        CREATE TABLE webhook_deliveries (
            id INTEGER PRIMARY KEY,
            webhook_id TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            event_type TEXT NOT NULL,
            body TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state = 'queued' OR state = 'claimed' OR state = 'retrying' OR state = 'sent' OR state = 'dead'),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_owner TEXT,
            created_at INTEGER NOT NULL,
            give_up_at INTEGER NOT NULL,
            finished_at INTEGER,
            last_reply TEXT
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state NOT IN ('sent', 'dead');
        CREATE TABLE webhook_endpoints_disabled (
            endpoint TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            disabled_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
        // 8: each daemon's heartbeat, so that another takes back the claims of one that died
        // before their leases run out (`HeartbeatKeeper`). A row per outbox pool and webhook
        // worker; a graceful stop, or the daemon that finds it dead, removes it.
        Migration("heartbeats", """
        CREATE TABLE daemon_heartbeats (
            owner TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at INTEGER NOT NULL,
            beat_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
        // 9: the per-client-IP limit where several machines share the database (a SQLite daemon
        // counts in its memory; the store suite covers both), one row per client (an HMAC of its address): the time in
        // ms its next request is due under ClientRatePolicy, and whether its last one fitted.
        Migration("clientRate", """
        CREATE TABLE client_rate (
            bucket BLOB PRIMARY KEY,
            tat INTEGER NOT NULL,
            allowed INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
        // 10: webhook endpoints an operator added (`postern webhooks add`): URL, event filter (`*`
        // or a comma list of types), the signing secret sealed under the master key and, after a
        // rotation, the previous one until `previous_until`; each delivery names its endpoint.
        Migration("webhookEndpoints", """
        CREATE TABLE webhook_endpoints (
            id TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            events TEXT NOT NULL,
            sealed_secret BLOB NOT NULL,
            sealed_previous BLOB,
            previous_until INTEGER,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        ALTER TABLE webhook_deliveries ADD COLUMN endpoint_id TEXT;
        """),
        // 11: the delivery log, one row per attempt of an outbox message: when, which transport,
        // the reply's code and cleaned text, how long; the recipient only as a keyed hash.
        Migration("deliveryLog", """
        CREATE TABLE outbox_attempts (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL,
            recipient_hash BLOB NOT NULL,
            attempted_at INTEGER NOT NULL,
            duration_ms INTEGER NOT NULL,
            transport TEXT NOT NULL,
            reply_code INTEGER,
            reply TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'deferred', 'failed'))
        );
        CREATE INDEX outbox_attempts_message ON outbox_attempts(message_id);
        CREATE INDEX outbox_attempts_recipient ON outbox_attempts(recipient_hash);
        CREATE INDEX outbox_attempts_time ON outbox_attempts(attempted_at);
        """),
        // 12: bounces, what a delivery report said about a sent message (VERP-matched), kept on its
        // row, so housekeeping deletes it with the row. The CHECK is written without an IN list
        // of constants, which would make every insert build a temporary b-tree.
        Migration("bounces", """
        ALTER TABLE outbox ADD COLUMN bounce_kind TEXT CHECK (bounce_kind = 'failed' OR bounce_kind = 'delayed' OR bounce_kind = 'complaint');
        ALTER TABLE outbox ADD COLUMN bounce_status TEXT;
        ALTER TABLE outbox ADD COLUMN bounce_detail TEXT;
        ALTER TABLE outbox ADD COLUMN bounced_at INTEGER;
        """),
        // 13: the SMS outbox, a sibling of `outbox` and `webhook_deliveries` (their states, lease
        // and due index). The number is sealed under the master key (`PhoneNumberSeal`) and kept
        // only until the message is finished (erased then); the country code stays for metrics. Nothing composed is stored: the text is made at
        // each attempt.
        Migration("smsOutbox", """
        CREATE TABLE sms_outbox (
            id INTEGER PRIMARY KEY,
            intent TEXT NOT NULL,
            recipient BLOB,
            country_code TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state = 'queued' OR state = 'claimed' OR state = 'retrying' OR state = 'sent' OR state = 'dead'),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_owner TEXT,
            created_at INTEGER NOT NULL,
            give_up_at INTEGER NOT NULL,
            finished_at INTEGER,
            last_reply TEXT
        );
        CREATE INDEX sms_outbox_due ON sms_outbox(next_attempt_at) WHERE state NOT IN ('sent', 'dead');
        -- Fixed-window counters (the SMS budgets per country and per day): one row per bucket,
        -- a keyed hash, reset in place.
        CREATE TABLE rate_windows (
            bucket BLOB PRIMARY KEY,
            window_start INTEGER NOT NULL,
            count INTEGER NOT NULL
        ) WITHOUT ROWID;
        """),
        // 14: phone claims (issue 17): a claim by its id and its code's keyed hash, the number
        // only as a keyed hash and its country calling code; `phone_numbers` holds the one
        // verified account per number (its primary key is the unique index that decides races).
        Migration("phoneClaims", """
        CREATE TABLE phone_claims (
            id TEXT PRIMARY KEY,
            uid TEXT REFERENCES accounts(uid) ON DELETE CASCADE,
            number_hash BLOB NOT NULL,
            country_code TEXT NOT NULL,
            code_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            code_expires_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            wrong_tries INTEGER NOT NULL DEFAULT 0,
            owner_approved_at INTEGER,
            holder_proved_at INTEGER,
            transfer_from TEXT,
            transfer_due_at INTEGER,
            locale TEXT
        ) WITHOUT ROWID;
        CREATE INDEX phone_claims_uid ON phone_claims(uid);
        CREATE INDEX phone_claims_transfer_from ON phone_claims(transfer_from) WHERE transfer_from IS NOT NULL;
        CREATE INDEX phone_claims_expiry ON phone_claims(expires_at);
        CREATE TABLE phone_numbers (
            number_hash BLOB PRIMARY KEY,
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            claim_id TEXT NOT NULL UNIQUE REFERENCES phone_claims(id) ON DELETE CASCADE,
            verified_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX phone_numbers_uid ON phone_numbers(uid);
        """),
        // 15: phone sign-in requests (issue 17 point 4, --phone-sign-in): one per number, keyed by
        // its keyed hash (a newer request replaces the older: its code supersedes), the code only
        // as a keyed hash bound to the request id.
        Migration("phoneSignIns", """
        CREATE TABLE phone_sign_ins (
            number_hash BLOB PRIMARY KEY,
            request_id TEXT NOT NULL UNIQUE,
            country_code TEXT NOT NULL,
            code_hash BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            tries INTEGER NOT NULL DEFAULT 0,
            locale TEXT
        ) WITHOUT ROWID;
        CREATE INDEX phone_sign_ins_expiry ON phone_sign_ins(expires_at);
        """),
        // 16: a sign-in link bound to the browser that asked (`bindBrowser`): its
        // code_challenge is then the S256 of that browser's cookie, and the page tells "another
        // browser" and "already signed in" from it.
        Migration("browserBound", """
        ALTER TABLE action_requests ADD COLUMN browser_bound INTEGER NOT NULL DEFAULT 0;
        """),
        // 17: the delivery log of migration 11 rebuilt with the same columns, rows and indexes,
        // but its CHECK written as an equality chain: `outcome IN ('sent', 'deferred', 'failed')`
        // built a temporary b-tree on every insert, one per delivery attempt on the one writer
        // thread (migration 3 has the story). A database with a long log copies it once here.
        Migration("deliveryLogWithoutLists", """
        CREATE TABLE outbox_attempts_rebuilt (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL,
            recipient_hash BLOB NOT NULL,
            attempted_at INTEGER NOT NULL,
            duration_ms INTEGER NOT NULL,
            transport TEXT NOT NULL,
            reply_code INTEGER,
            reply TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome = 'sent' OR outcome = 'deferred' OR outcome = 'failed')
        );
        INSERT INTO outbox_attempts_rebuilt SELECT id, message_id, recipient_hash, attempted_at, duration_ms, transport,
            reply_code, reply, outcome FROM outbox_attempts;
        DROP TABLE outbox_attempts;
        ALTER TABLE outbox_attempts_rebuilt RENAME TO outbox_attempts;
        CREATE INDEX outbox_attempts_message ON outbox_attempts(message_id);
        CREATE INDEX outbox_attempts_recipient ON outbox_attempts(recipient_hash);
        CREATE INDEX outbox_attempts_time ON outbox_attempts(attempted_at);
        """),
        // 18: the delivery log without its index on the recipient's hash. A keyed hash is random, so
        // every attempt dirtied its own leaf page of that index and each commit wrote those pages
        // whole to the WAL: half of what a delivered message wrote (17.4 KB per message with it,
        // 8.7 KB without, socket writes included), on the one writer the outbox's records wait for.
        // Finding a recipient's messages (`postern outbox find`, an operator's lookup) reads the
        // log newest message first instead: about 0.4 s per million attempts kept.
        Migration("deliveryLogWithoutRecipientIndex", """
        DROP INDEX outbox_attempts_recipient;
        """),
        // 19: a claim's number, sealed as the SMS outbox seals it (AES-256-GCM under the master key),
        // kept until the claim is settled: the only way to tell a number's holder by SMS, when the
        // number is its account's only way in, that another account waits for its release — the
        // claim has only the number's keyed hash, and the code's SMS erased its copy once sent.
        Migration("claimNumbers", """
        ALTER TABLE phone_claims ADD COLUMN recipient BLOB;
        """),
        // 20: OpenID Connect authorization codes (issue 45): by the SHA-256 of the code, never the
        // code; bound to client, redirect URI, PKCE challenge and nonce; consumed_at set once by
        // the one redemption that wins, the row kept until pruned so a replay is told from an
        // unknown code (and revokes the refresh family it gave). Clients are configuration.
        Migration("oidcCodes", """
        CREATE TABLE oidc_codes (
            code_hash BLOB PRIMARY KEY,
            client_id TEXT NOT NULL,
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            redirect_uri TEXT NOT NULL,
            scopes TEXT NOT NULL,
            nonce TEXT,
            code_challenge TEXT,
            auth_time INTEGER NOT NULL,
            methods TEXT NOT NULL,
            refresh_family TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            consumed_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX oidc_codes_uid ON oidc_codes(uid);
        CREATE INDEX oidc_codes_expiry ON oidc_codes(expires_at);
        """),
        // 21: the OpenID Connect client a refresh token was issued to (issue 45): only that client
        // refreshes it; NULL for the API's own sessions, which /v1/token keeps to.
        Migration("refreshTokenClients", """
        ALTER TABLE refresh_tokens ADD COLUMN client_id TEXT;
        """),
        // 22: the OpenID Connect provider's registered clients (a confidential one's secret only as
        // its SHA-256; NULL for a public client), the authorization requests waiting for a sign-in
        // (bound to the SHA-256 of the browser's cookie), browser sessions by the SHA-256 of their
        // cookie, and consents. An account's deletion takes its sessions and consents, a client's
        // its consents (the store deletes its codes and revokes its refresh tokens).
        Migration("oidcClientsAndSessions", """
        CREATE TABLE oidc_clients (
            client_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            secret_hash BLOB,
            redirect_uris TEXT NOT NULL,
            post_logout_redirect_uris TEXT NOT NULL,
            scopes TEXT NOT NULL,
            first_party INTEGER NOT NULL DEFAULT 0,
            allow_no_pkce INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE oidc_requests (
            id TEXT PRIMARY KEY,
            browser_hash BLOB NOT NULL,
            client_id TEXT NOT NULL,
            parameters TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX oidc_requests_expiry ON oidc_requests(expires_at);
        CREATE TABLE oidc_browser_sessions (
            hash BLOB PRIMARY KEY,
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            auth_time INTEGER NOT NULL,
            methods TEXT NOT NULL,
            session_version INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX oidc_browser_sessions_uid ON oidc_browser_sessions(uid);
        CREATE INDEX oidc_browser_sessions_expiry ON oidc_browser_sessions(expires_at);
        CREATE TABLE oidc_consents (
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            client_id TEXT NOT NULL REFERENCES oidc_clients(client_id) ON DELETE CASCADE,
            scopes TEXT NOT NULL,
            granted_at INTEGER NOT NULL,
            PRIMARY KEY (uid, client_id)
        ) WITHOUT ROWID;
        CREATE INDEX oidc_consents_client ON oidc_consents(client_id);
        """),
        // 23: the JWS algorithm of a client's ID tokens and access tokens (OpenID Connect
        // Registration's id_token_signed_response_alg): ES256, or RS256 for a relying party that
        // takes nothing else. The clients registered before sign with ES256, as they did.
        Migration("oidcClientSigningAlgorithm", """
        ALTER TABLE oidc_clients ADD COLUMN id_token_signed_response_alg TEXT NOT NULL DEFAULT 'ES256';
        """),
        // 24: identity providers' subjects linked to accounts (issue 46): (provider, subject) → uid,
        // at most one identity of a provider per account, deleted with the account. The address the
        // provider vouched for is kept as `addresses` keeps an account's (the local part as given,
        // the domain in A-labels) but not in that table: it is no account's key, only what the
        // provider said. The replay ledger of providers' ID tokens, by the SHA-256 of the token.
        Migration("providerIdentities", """
        CREATE TABLE provider_identities (
            provider TEXT NOT NULL,
            subject TEXT NOT NULL,
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            email_local_part TEXT,
            email_domain TEXT,
            email_verified INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER NOT NULL,
            PRIMARY KEY (provider, subject),
            UNIQUE (uid, provider)
        ) WITHOUT ROWID;
        CREATE TABLE provider_token_uses (
            token_hash BLOB PRIMARY KEY,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX provider_token_uses_expiry ON provider_token_uses(expires_at);
        """),
        // 25: the admin API's user list (issue 48) pages newest first by keyset, (created_at,
        // uid) descending: this index reads a page, the first or the five-thousandth, without a
        // scan or a sort.
        Migration("accountsNewestFirst", """
        CREATE INDEX accounts_newest_first ON accounts(created_at, uid);
        """),
        Migration("suppressionsNewestFirst", """
        CREATE INDEX suppressions_newest_first ON suppressions(created_at, address);
        """),
        // 27: the sessions users see and revoke (issue 48): one row per refresh family, under a
        // public random id (the ID token's `sid`), with the device's name and the client's /24 or
        // /48 only; revoking the family deletes it, housekeeping deletes it at its expiry. An
        // account's activity, newest first by (at, id) per account, kept --activity-days; no
        // foreign key (an event may name an account its transaction deletes), the account's
        // deletion deletes it.
        Migration("sessionsAndActivity", """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            uid TEXT NOT NULL REFERENCES accounts(uid) ON DELETE CASCADE,
            family TEXT NOT NULL UNIQUE,
            device_name TEXT,
            network TEXT,
            method TEXT NOT NULL,
            client_id TEXT,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX sessions_uid ON sessions(uid);
        CREATE INDEX sessions_expiry ON sessions(expires_at);
        CREATE TABLE account_activity (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL,
            at INTEGER NOT NULL,
            kind TEXT NOT NULL,
            method TEXT,
            device_name TEXT,
            network TEXT
        );
        CREATE INDEX account_activity_newest_first ON account_activity(uid, at, id);
        CREATE INDEX account_activity_at ON account_activity(at);
        """),
    ]

    /// The statements of each version, in order.
    static let migrations: [String] = named.versions

    /// `PRAGMA auto_vacuum` for incremental vacuum: freed pages are kept on the freelist until
    /// `PRAGMA incremental_vacuum(N)` gives them back to the file system.
    static let incrementalAutoVacuum: Int64 = 2
}
