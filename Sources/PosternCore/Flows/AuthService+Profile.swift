import Foundation

extension AuthService {
    /// The signed-in user's record.
    /// - Throws: `AuthError.invalidIDToken`.
    public func me(idToken: String) throws(AuthError) -> UserRecord {
        UserRecord(try verifyIDToken(idToken).account)
    }

    /// Changes the display name and/or the app-owned attributes (a JSON object of at most 4 KiB).
    /// - Throws: `AuthError.invalidArgument` naming the field, `invalidIDToken`.
    public func updateProfile(idToken: String, displayName: String??, attributes: String?) throws(AuthError) -> UserRecord {
        let (account, _) = try verifyIDToken(idToken)
        if case .some(.some(let name)) = displayName {
            guard name.count <= 256, !name.contains(where: { $0.isNewline }) else {
                throw .invalidArgument("displayName must be one line of at most 256 characters.")
            }
        }
        if let attributes {
            guard attributes.utf8.count <= 4096 else { throw .invalidArgument("attributes must be at most 4 KiB of JSON.") }
            guard (try? JSONSerialization.jsonObject(with: Data(attributes.utf8))) is [String: Any] else {
                throw .invalidArgument("attributes must be a JSON object.")
            }
        }
        return try write { tx in
            guard var current = try tx.account(uid: account.uid) else { throw AuthError.invalidIDToken }
            if let displayName { current.displayName = displayName }
            if let attributes { current.attributes = attributes }
            try tx.updateAccount(current)
            return UserRecord(current)
        }
    }

    /// Deletes the signed-in account (sign-in within the last 5 minutes).
    /// - Throws: `AuthError.requiresRecentLogin`, `invalidIDToken`.
    public func deleteAccount(idToken: String) throws(AuthError) {
        let (account, _) = try verifyRecentSignIn(idToken)
        try write { tx in try tx.deleteAccount(uid: account.uid) }
    }

    /// The account holding `email`, for operators.
    /// - Throws: `AuthError.invalidEmail`.
    public func user(email: String) throws(AuthError) -> UserRecord? {
        let address = try parseEmail(email)
        return try read { tx in try tx.account(address: address).map(UserRecord.init) }
    }

    /// The account `uid`, for operators.
    public func user(uid: String) throws(AuthError) -> UserRecord? {
        try read { tx in try tx.account(uid: uid).map(UserRecord.init) }
    }

    /// Changes an account for operators: disabled (revokes its sessions), email verified, name.
    /// - Throws: `AuthError.userNotFound`.
    public func updateUser(uid: String, disabled: Bool?, emailVerified: Bool?, displayName: String??) throws(AuthError) -> UserRecord {
        let now = clock.unixSeconds()
        return try write { tx in
            guard var account = try tx.account(uid: uid) else { throw AuthError.userNotFound }
            if let disabled {
                account.disabled = disabled
                if disabled { try Self.revokeAllSessions(of: &account, tx: tx, now: now) }
            }
            if let emailVerified { account.emailVerified = emailVerified }
            if let displayName { account.displayName = displayName }
            try tx.updateAccount(account)
            return UserRecord(account)
        }
    }

    /// Deletes an account for operators.
    /// - Throws: `AuthError.userNotFound`.
    public func deleteUser(uid: String) throws(AuthError) {
        try write { tx in
            guard try tx.account(uid: uid) != nil else { throw AuthError.userNotFound }
            try tx.deleteAccount(uid: uid)
        }
    }
}
