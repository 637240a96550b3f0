import PosternCore

extension InMemoryStore.Transaction {
    private func withHolding(_ claim: PhoneClaim) -> PhoneClaim {
        var claim = claim
        claim.verifiedAt = state.phoneNumbers.values.first { $0.claimID == claim.id }?.verifiedAt
        return claim
    }

    private func sorted(_ claims: some Sequence<PhoneClaim>) -> [PhoneClaim] {
        claims.map(withHolding).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// The accounts foreign key of a claim: nil or an account that exists.
    private func requireAccount(_ uid: String?) throws {
        if let uid, state.accounts[uid] == nil { throw StoreError.notFound("account") }
    }

    public func phoneClaim(id: String) throws -> PhoneClaim? { state.phoneClaims[id].map(withHolding) }

    public func phoneClaims(uid: String) throws -> [PhoneClaim] { sorted(state.phoneClaims.values.filter { $0.uid == uid }) }

    public func phoneTransfers(from uid: String) throws -> [PhoneClaim] {
        sorted(state.phoneClaims.values.filter { $0.transferFrom == uid })
    }

    public func phoneTransfersDue(by now: Int64, limit: Int) throws -> [PhoneClaim] {
        let due = state.phoneClaims.values.filter { $0.transferFrom != nil && ($0.transferDueAt ?? .max) <= now }
        return Array(due.map(withHolding).sorted { ($0.transferDueAt ?? .max, $0.id) < ($1.transferDueAt ?? .max, $1.id) }.prefix(max(0, limit)))
    }

    public func phoneNumberHolder(numberHash: [UInt8]) throws -> PhoneNumberHolder? { state.phoneNumbers[numberHash] }

    public func insertPhoneClaim(_ claim: PhoneClaim) throws {
        guard state.phoneClaims[claim.id] == nil else { throw StoreError.duplicate("phone claim id") }
        try requireAccount(claim.uid)
        var stored = claim
        stored.verifiedAt = nil
        state.phoneClaims[claim.id] = stored
    }

    public func updatePhoneClaim(_ claim: PhoneClaim) throws {
        guard var stored = state.phoneClaims[claim.id] else { throw StoreError.notFound("phone claim") }
        try requireAccount(claim.uid)
        stored.expiresAt = claim.expiresAt
        stored.wrongTries = claim.wrongTries
        stored.ownerApprovedAt = claim.ownerApprovedAt
        stored.holderProvedAt = claim.holderProvedAt
        stored.transferFrom = claim.transferFrom
        stored.transferDueAt = claim.transferDueAt
        stored.uid = claim.uid
        state.phoneClaims[claim.id] = stored
    }

    public func rekeyPhoneNumber(from legacyHash: [UInt8], to numberHash: [UInt8]) throws -> Bool {
        guard state.phoneNumbers[numberHash] == nil, var holding = state.phoneNumbers.removeValue(forKey: legacyHash) else { return false }
        holding.numberHash = numberHash
        state.phoneNumbers[numberHash] = holding
        for (id, claim) in state.phoneClaims where claim.numberHash == legacyHash { state.phoneClaims[id]?.numberHash = numberHash }
        return true
    }

    public func keepNumber(_ number: PhoneNumber, ofClaim id: String) throws -> Bool {
        guard state.phoneClaims[id] != nil else { return false }
        state.claimNumbers[id] = number
        return true
    }

    public func forgetNumber(ofClaim id: String) throws { state.claimNumbers[id] = nil }

    public func keptNumber(ofClaim id: String) throws -> PhoneNumber? {
        state.phoneClaims[id] == nil ? nil : state.claimNumbers[id]
    }

    public func enqueueSMS(_ intent: SMSIntent, toNumberOfClaim id: String, now: Int64, giveUpAt: Int64) throws -> Bool {
        guard state.phoneClaims[id] != nil, let number = state.claimNumbers[id] else { return false }
        _ = try enqueueSMS(intent, recipient: number, now: now, giveUpAt: giveUpAt)
        return true
    }

    public func deletePhoneClaim(id: String) throws -> Bool {
        state.claimNumbers[id] = nil
        state.phoneNumbers = state.phoneNumbers.filter { $0.value.claimID != id }
        return state.phoneClaims.removeValue(forKey: id) != nil
    }

    public func holdPhoneNumber(_ holder: PhoneNumberHolder) throws -> Bool {
        // The foreign keys refuse a holding of no claim or no account; the unique keys (the number,
        // and the claim: one holding each) make it false, as `ON CONFLICT DO NOTHING` does.
        guard state.phoneClaims[holder.claimID] != nil else { throw StoreError.notFound("phone claim") }
        try requireAccount(holder.uid)
        guard state.phoneNumbers[holder.numberHash] == nil, !state.phoneNumbers.values.contains(where: { $0.claimID == holder.claimID }) else {
            return false
        }
        state.phoneNumbers[holder.numberHash] = holder
        return true
    }

    public func prunePhoneClaims(expiredBy horizon: Int64, limit: Int) throws -> Int {
        let held = Set(state.phoneNumbers.values.map(\.claimID))
        let doomed = state.phoneClaims.values
            .filter {
                $0.expiresAt <= horizon && $0.transferDueAt == nil && !($0.ownerApprovedAt != nil && $0.holderProvedAt != nil)
                    && !held.contains($0.id)
            }
            .prefix(max(0, limit))
        for claim in doomed { state.phoneClaims[claim.id] = nil }
        return doomed.count
    }
}

// MARK: phone sign-in requests (--phone-sign-in)

extension InMemoryStore.Transaction {
    public func phoneSignIn(requestID: String) throws -> PhoneSignInCode? {
        state.phoneSignIns.values.first { $0.requestID == requestID }
    }

    public func putPhoneSignIn(_ code: PhoneSignInCode) throws {
        if let other = state.phoneSignIns.values.first(where: { $0.requestID == code.requestID }), other.numberHash != code.numberHash {
            throw StoreError.duplicate("phone sign-in request id")
        }
        state.phoneSignIns[code.numberHash] = code
    }

    public func takePhoneSignInTry(numberHash: [UInt8], maximumTries: Int) throws -> PhoneSignInCode? {
        guard var code = state.phoneSignIns[numberHash], code.tries < maximumTries else { return nil }
        code.tries += 1
        state.phoneSignIns[numberHash] = code
        return code
    }

    public func deletePhoneSignIn(requestID: String) throws -> Bool {
        guard let code = state.phoneSignIns.values.first(where: { $0.requestID == requestID }) else { return false }
        state.phoneSignIns[code.numberHash] = nil
        return true
    }

    public func prunePhoneSignIns(expiredBy horizon: Int64, limit: Int) throws -> Int {
        let doomed = state.phoneSignIns.values.filter { $0.expiresAt <= horizon }.prefix(max(0, limit))
        for code in doomed { state.phoneSignIns[code.numberHash] = nil }
        return doomed.count
    }
}
