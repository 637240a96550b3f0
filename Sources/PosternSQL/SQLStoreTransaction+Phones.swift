import PosternCore

extension SQLStoreTransaction {
    private static let claimColumns =
        "c.id, c.uid, c.number_hash, c.country_code, c.code_hash, c.created_at, c.code_expires_at, c.expires_at, c.wrong_tries, c.owner_approved_at, c.holder_proved_at, c.transfer_from, c.transfer_due_at, c.locale, n.verified_at"
    private static let claimSource = "phone_claims c LEFT JOIN phone_numbers n ON n.claim_id = c.id"

    private func readClaim(_ row: any SQLRow) throws -> PhoneClaim {
        guard let id = row.text(0), let numberHash = row.blob(2), let country = row.text(3), let codeHash = row.blob(4) else {
            throw StoreError.corrupt("phone claim row")
        }
        return PhoneClaim(
            id: id, uid: row.text(1), numberHash: numberHash, countryCode: country, codeHash: codeHash,
            createdAt: row.integer(5), codeExpiresAt: row.integer(6), expiresAt: row.integer(7),
            wrongTries: Int(row.integer(8)), ownerApprovedAt: row.optionalInteger(9), holderProvedAt: row.optionalInteger(10),
            verifiedAt: row.optionalInteger(14), transferFrom: row.text(11), transferDueAt: row.optionalInteger(12),
            locale: row.text(13))
    }

    private func claims(
        where condition: String, _ args: [SQLValue], orderedBy order: String = "c.created_at, c.id", limit: Int? = nil
    ) throws -> [PhoneClaim] {
        var claims: [PhoneClaim] = []
        let sql = "SELECT \(Self.claimColumns) FROM \(Self.claimSource) WHERE \(condition) ORDER BY \(order)" + (limit == nil ? "" : " LIMIT ?")
        try db.query(sql, args + (limit.map { [.integer(Int64(max(0, $0)))] } ?? [])) {
            claims.append(try readClaim($0))
        }
        return claims
    }

    public func phoneClaim(id: String) throws -> PhoneClaim? {
        try claims(where: "c.id = ?", [.text(id)]).first
    }

    public func phoneClaims(uid: String) throws -> [PhoneClaim] {
        try claims(where: "c.uid = ?", [.text(uid)])
    }

    public func phoneTransfers(from uid: String) throws -> [PhoneClaim] {
        try claims(where: "c.transfer_from = ?", [.text(uid)])
    }

    public func phoneTransfersDue(by now: Int64, limit: Int) throws -> [PhoneClaim] {
        // `transfer_from IS NOT NULL` lets the partial index of the waiting transfers find them.
        try claims(where: "c.transfer_from IS NOT NULL AND c.transfer_due_at <= ?", [.integer(now)], orderedBy: "c.transfer_due_at, c.id", limit: limit)
    }

    public func phoneNumberHolder(numberHash: [UInt8]) throws -> PhoneNumberHolder? {
        try db.first("SELECT uid, claim_id, verified_at FROM phone_numbers WHERE number_hash = ?", [.blob(numberHash)]) { row in
            guard let uid = row.text(0), let claim = row.text(1) else { throw StoreError.corrupt("phone number row") }
            return PhoneNumberHolder(numberHash: numberHash, uid: uid, claimID: claim, verifiedAt: row.integer(2))
        }
    }

    private func claimState(_ c: PhoneClaim) -> [SQLValue] {
        [
            .integer(c.expiresAt), .integer(Int64(c.wrongTries)), c.ownerApprovedAt.map(SQLValue.integer) ?? .null,
            c.holderProvedAt.map(SQLValue.integer) ?? .null, c.transferFrom.map(SQLValue.text) ?? .null,
            c.transferDueAt.map(SQLValue.integer) ?? .null, c.uid.map(SQLValue.text) ?? .null, .text(c.id),
        ]
    }

    public func insertPhoneClaim(_ c: PhoneClaim) throws {
        let inserted = try db.execute(
            "INSERT INTO phone_claims (expires_at, wrong_tries, owner_approved_at, holder_proved_at, transfer_from, transfer_due_at, uid, id, number_hash, country_code, code_hash, created_at, code_expires_at, locale) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            claimState(c) + [
                .blob(c.numberHash), .text(c.countryCode), .blob(c.codeHash), .integer(c.createdAt), .integer(c.codeExpiresAt),
                c.locale.map(SQLValue.text) ?? .null,
            ])
        guard inserted == 1 else { throw StoreError.duplicate("phone claim id") }
    }

    public func updatePhoneClaim(_ c: PhoneClaim) throws {
        let changed = try db.execute(
            "UPDATE phone_claims SET expires_at = ?, wrong_tries = ?, owner_approved_at = ?, holder_proved_at = ?, transfer_from = ?, transfer_due_at = ?, uid = ? WHERE id = ?",
            claimState(c))
        guard changed == 1 else { throw StoreError.notFound("phone claim") }
    }

    public func deletePhoneClaim(id: String) throws -> Bool {
        // The holding goes with it (ON DELETE CASCADE); said here too, for a store without foreign keys.
        try db.execute("DELETE FROM phone_numbers WHERE claim_id = ?", [.text(id)])
        return try db.execute("DELETE FROM phone_claims WHERE id = ?", [.text(id)]) == 1
    }

    public func holdPhoneNumber(_ holder: PhoneNumberHolder) throws -> Bool {
        // DO NOTHING rather than an error: PostgreSQL aborts the whole transaction on a failed
        // statement, and the flow goes on to start a transfer instead.
        try db.execute(
            "INSERT INTO phone_numbers (number_hash, uid, claim_id, verified_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [.blob(holder.numberHash), .text(holder.uid), .text(holder.claimID), .integer(holder.verifiedAt)]) == 1
    }

    public func rekeyPhoneNumber(from legacyHash: [UInt8], to numberHash: [UInt8]) throws -> Bool {
        // The NOT EXISTS keeps a canonical holding (the primary key would refuse the move anyway,
        // and PostgreSQL would abort the whole write on the refusal).
        let moved = try db.execute(
            "UPDATE phone_numbers SET number_hash = ? WHERE number_hash = ? AND NOT EXISTS (SELECT 1 FROM phone_numbers WHERE number_hash = ?)",
            [.blob(numberHash), .blob(legacyHash), .blob(numberHash)])
        guard moved == 1 else { return false }
        try db.execute("UPDATE phone_claims SET number_hash = ? WHERE number_hash = ?", [.blob(numberHash), .blob(legacyHash)])
        return true
    }

    public func keepNumber(_ number: PhoneNumber, ofClaim id: String) throws -> Bool {
        guard let phoneSeal else { throw StoreError.unavailable("this store was opened without the master key: it cannot keep a number") }
        return try db.execute("UPDATE phone_claims SET recipient = ? WHERE id = ?", [.blob(try phoneSeal.seal(number)), .text(id)]) == 1
    }

    public func keptNumber(ofClaim id: String) throws -> PhoneNumber? {
        guard let phoneSeal,
            let sealed = try db.first("SELECT recipient FROM phone_claims WHERE id = ? AND recipient IS NOT NULL", [.text(id)], { $0.blob(0) ?? [] })
        else { return nil }
        return try phoneSeal.open(sealed)
    }

    public func forgetNumber(ofClaim id: String) throws {
        try db.execute("UPDATE phone_claims SET recipient = NULL WHERE id = ? AND recipient IS NOT NULL", [.text(id)])
    }

    public func enqueueSMS(_ intent: SMSIntent, toNumberOfClaim id: String, now: Int64, giveUpAt: Int64) throws -> Bool {
        // Copied sealed: the seal is the outbox's own (same key, same purpose), so the number is
        // never opened here.
        let queued = try db.execute(
            """
            INSERT INTO sms_outbox (intent, recipient, country_code, state, next_attempt_at, created_at, give_up_at)
            SELECT ?, recipient, country_code, 'queued', ?, ?, ? FROM phone_claims WHERE id = ? AND recipient IS NOT NULL
            """,
            [.text(intent.storageText), .integer(now), .integer(now), .integer(giveUpAt), .text(id)])
        guard queued == 1 else { return false }
        // The SMS worker listens to the mail doorbell too: one post-commit hook for every queue.
        queuedMail = true
        return true
    }

    public func prunePhoneClaims(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(
            table: "phone_claims", key: "id",
            condition:
                "expires_at <= ? AND transfer_due_at IS NULL AND NOT (owner_approved_at IS NOT NULL AND holder_proved_at IS NOT NULL) AND id NOT IN (SELECT claim_id FROM phone_numbers)",
            [.integer(horizon)], limit: limit)
    }
}

// MARK: phone sign-in requests (--phone-sign-in)

extension SQLStoreTransaction {
    private static let signInColumns = "request_id, number_hash, country_code, code_hash, created_at, expires_at, tries, locale"

    private func signIn(where condition: String, _ args: [SQLValue]) throws -> PhoneSignInCode? {
        try db.first("SELECT \(Self.signInColumns) FROM phone_sign_ins WHERE \(condition)", args) { row in
            guard let id = row.text(0), let numberHash = row.blob(1), let country = row.text(2), let codeHash = row.blob(3) else {
                throw StoreError.corrupt("phone sign-in row")
            }
            return PhoneSignInCode(
                requestID: id, numberHash: numberHash, countryCode: country, codeHash: codeHash, createdAt: row.integer(4),
                expiresAt: row.integer(5), tries: Int(row.integer(6)), locale: row.text(7))
        }
    }

    public func phoneSignIn(requestID: String) throws -> PhoneSignInCode? {
        try signIn(where: "request_id = ?", [.text(requestID)])
    }

    public func putPhoneSignIn(_ c: PhoneSignInCode) throws {
        // One row per number: the newer request takes the row, so the older code is dead.
        try db.execute(
            "INSERT INTO phone_sign_ins (number_hash, request_id, country_code, code_hash, created_at, expires_at, tries, locale) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (number_hash) DO UPDATE SET request_id = excluded.request_id, country_code = excluded.country_code, code_hash = excluded.code_hash, created_at = excluded.created_at, expires_at = excluded.expires_at, tries = excluded.tries, locale = excluded.locale",
            [
                .blob(c.numberHash), .text(c.requestID), .text(c.countryCode), .blob(c.codeHash), .integer(c.createdAt),
                .integer(c.expiresAt), .integer(Int64(c.tries)), c.locale.map(SQLValue.text) ?? .null,
            ])
    }

    public func takePhoneSignInTry(numberHash: [UInt8], maximumTries: Int) throws -> PhoneSignInCode? {
        // One statement under the row's lock: PostgreSQL re-checks `tries < ?` on the row a
        // concurrent try left, SQLite writes one at a time.
        let counted = try db.execute(
            "UPDATE phone_sign_ins SET tries = tries + 1 WHERE number_hash = ? AND tries < ?",
            [.blob(numberHash), .integer(Int64(maximumTries))])
        guard counted == 1 else { return nil }
        return try signIn(where: "number_hash = ?", [.blob(numberHash)])
    }

    public func deletePhoneSignIn(requestID: String) throws -> Bool {
        try db.execute("DELETE FROM phone_sign_ins WHERE request_id = ?", [.text(requestID)]) == 1
    }

    public func prunePhoneSignIns(expiredBy horizon: Int64, limit: Int) throws -> Int {
        try pruneBatch(table: "phone_sign_ins", key: "request_id", condition: "expires_at <= ?", [.integer(horizon)], limit: limit)
    }
}
