import Foundation
import PosternCrypto

/// Reads an export file into rows of accounts, for one `ImportSource`.
public struct ExportReader: Sendable {
    /// Where a Firebase file's hashes point: the key ring id of the project's signer key and the
    /// project's public parameters. Nil for a Firebase file read without `--hash-key`, whose rows
    /// with a password are then malformed ("password hash without --hash-key").
    public struct FirebaseProject: Sendable {
        /// The key ring id of the sealed signer key.
        public let keyID: UInt32
        /// Rounds (scrypt r).
        public let rounds: Int
        /// Mem cost (log2 N).
        public let memCost: Int
        /// The salt separator.
        public let saltSeparator: [UInt8]

        /// Creates the reference.
        public init(keyID: UInt32, rounds: Int, memCost: Int, saltSeparator: [UInt8]) {
            self.keyID = keyID
            self.rounds = rounds
            self.memCost = memCost
            self.saltSeparator = saltSeparator
        }
    }

    let source: ImportSource
    let firebase: FirebaseProject?
    /// The creation time of a row that gives none.
    let now: Int64
    /// The most an imported password hash may cost (the service's own; see `PasswordCostBound`).
    let costBound: PasswordCostBound

    /// A reader for `source`; hashes costing more than `costBound` are refused by row.
    public init(source: ImportSource, firebase: FirebaseProject? = nil, now: Int64, costBound: PasswordCostBound = .standard) {
        self.source = source
        self.firebase = firebase
        self.now = now
        self.costBound = costBound
    }

    /// The rows of `data`: JSON (an array, `{"users": [...]}` or JSON Lines) when it starts with
    /// `{` or `[`, else CSV (Firebase's column order, or a header row for Supabase).
    public func rows(_ data: Data) -> [ImportRow] {
        let first = data.first { ![0x20, 0x0A, 0x0D, 0x09, 0xEF, 0xBB, 0xBF].contains($0) }
        if first == 0x7B || first == 0x5B {
            return ExportFile.objects(data).map { row in
                ImportRow(line: row.line, read: row.object.flatMap { object in Result { () throws(ImportProblem) in try account(object) } })
            }
        }
        guard source != .postern else { return [ImportRow(line: 1, .failure(ImportProblem("postern exports are JSON Lines")))] }
        var records = ExportFile.csvRecords(data)
        if source == .supabase {
            guard let header = records.first else { return [] }
            records.removeFirst()
            let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces) }
            return records.map { record in
                guard record.fields.count == names.count else { return ImportRow(line: record.line, .failure(ImportProblem("wrong number of columns"))) }
                let object = Dictionary(zip(names, record.fields.map { $0 as Any }), uniquingKeysWith: { first, _ in first })
                return ImportRow(line: record.line, Result { () throws(ImportProblem) in try supabase(object) })
            }
        }
        return records.map { record in
            ImportRow(line: record.line, read: Result { () throws(ImportProblem) in try firebaseCSV(record.fields) })
        }
    }

    private func account(_ object: [String: Any]) throws(ImportProblem) -> ImportedAccount {
        switch source {
        case .firebase: return try firebaseJSON(object)
        case .supabase: return ImportedAccount(account: try supabase(object))
        case .postern: return try PosternExport.imported(object, costBound: costBound)
        }
    }

    // MARK: Firebase

    /// Firebase's provider ids that are Postern's identity providers; the others (`password`,
    /// `phone`, `facebook.com`, …) are not brought in.
    static let firebaseProviders: [String: String] = ["google.com": "google", "apple.com": "apple"]

    /// A user of `firebase auth:export --format=json`. Each `providerUserInfo` entry of
    /// `google.com` or `apple.com` becomes a linked identity: its `rawId` is the provider's
    /// subject, its `email` the address the provider vouched for, verified only when it is the
    /// user's own address and the user's is verified (Firebase says nothing of the provider's own
    /// claim).
    private func firebaseJSON(_ o: [String: Any]) throws(ImportProblem) -> ImportedAccount {
        var imported = ImportedAccount(account: try firebaseAccount(
            uid: o["localId"] as? String, email: o["email"] as? String, verified: o["emailVerified"],
            hash: o["passwordHash"] as? String, salt: o["salt"] as? String, name: o["displayName"] as? String,
            disabled: o["disabled"], created: o["createdAt"], lastSignIn: o["lastSignedInAt"], attributes: o["customAttributes"]))
        guard let list = o["providerUserInfo"], !(list is NSNull) else { return imported }
        guard let entries = list as? [[String: Any]] else { throw ImportProblem("invalid providerUserInfo") }
        for entry in entries {
            guard let name = (entry["providerId"] as? String).flatMap({ Self.firebaseProviders[$0] }), let provider = Provider(rawValue: name)
            else { continue }
            try linkFirebase(&imported, provider, subject: entry["rawId"] as? String, email: entry["email"] as? String)
        }
        return imported
    }

    /// Links a Firebase provider entry's identity to `imported`'s account.
    private func linkFirebase(_ imported: inout ImportedAccount, _ provider: Provider, subject: String?, email text: String?) throws(ImportProblem) {
        let email: EmailAddress?
        do { email = try ImportFields.email(text) } catch { throw ImportProblem("invalid providerUserInfo email") }
        let own = imported.account
        try imported.link(
            provider, subject: subject, email: email, emailVerified: email != nil && email == own.email && own.emailVerified,
            field: "providerUserInfo")
    }

    /// `firebase auth:export --format=csv`: UID, Email, Email Verified, Password Hash, Password
    /// Salt, Name, Photo URL, 16 provider columns (ID, Email, Display Name, Photo URL of Google,
    /// Facebook, Twitter and GitHub), User Creation Time, Last Sign-In Time, Phone. A Google ID
    /// becomes a linked identity as in the JSON form; the others are not brought in.
    private func firebaseCSV(_ f: [String]) throws(ImportProblem) -> ImportedAccount {
        guard f.count >= 25 else { throw ImportProblem("wrong number of columns") }
        var imported = ImportedAccount(account: try firebaseAccount(
            uid: f[0], email: f[1], verified: f[2], hash: f[3], salt: f[4], name: f[5], disabled: nil, created: f[23],
            lastSignIn: f[24], attributes: nil))
        if !f[7].isEmpty, let google = Provider(rawValue: "google") { try linkFirebase(&imported, google, subject: f[7], email: f[8]) }
        return imported
    }

    private func firebaseAccount(
        uid: String?, email: String?, verified: Any?, hash: String?, salt: String?, name: String?, disabled: Any?, created: Any?,
        lastSignIn: Any?, attributes: Any?
    ) throws(ImportProblem) -> Account {
        var account = Account(
            uid: try ImportFields.uid(uid), email: try ImportFields.email(email),
            emailVerified: try ImportFields.bool(verified, field: "emailVerified"), displayName: try ImportFields.displayName(name),
            attributes: try ImportFields.attributes(attributes), disabled: try ImportFields.bool(disabled, field: "disabled"),
            createdAt: try ImportFields.milliseconds(created, field: "createdAt") ?? now,
            lastSignInAt: try ImportFields.milliseconds(lastSignIn, field: "lastSignedInAt"))
        if let hash, !hash.isEmpty {
            guard let project = firebase else { throw ImportProblem("password hash without --hash-key") }
            guard let hashBytes = Data(base64Encoded: hash), hashBytes.count >= 16 else { throw ImportProblem("invalid passwordHash") }
            guard let saltBytes = Data(base64Encoded: salt ?? "") else { throw ImportProblem("invalid salt") }
            account.passwordHash = FirebaseStoredHash(
                keyID: project.keyID, rounds: project.rounds, memCost: project.memCost, saltSeparator: project.saltSeparator,
                salt: Array(saltBytes), hash: Array(hashBytes)
            ).encoded
            account.providers = [.password]
        }
        return account
    }

    // MARK: Supabase

    /// A row of `auth.users`: id, email, encrypted_password (bcrypt), email_confirmed_at,
    /// created_at, last_sign_in_at, raw_user_meta_data (into attributes; its full_name or name is
    /// the display name), banned_until (disabled while in the future), deleted_at (skipped as
    /// malformed: a deleted user does not move).
    private func supabase(_ o: [String: Any]) throws(ImportProblem) -> Account {
        if let deleted = o["deleted_at"], !(deleted is NSNull), (deleted as? String)?.isEmpty != true {
            throw ImportProblem("deleted user")
        }
        let metadata = try ImportFields.attributes(o["raw_user_meta_data"])
        let metadataObject = metadata.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let name = (metadataObject?["full_name"] as? String) ?? (metadataObject?["name"] as? String)
        let banned = try ImportFields.timestamp(o["banned_until"], field: "banned_until")
        var account = Account(
            uid: try ImportFields.uid(o["id"] as? String), email: try ImportFields.email(o["email"] as? String),
            emailVerified: try ImportFields.timestamp(o["email_confirmed_at"], field: "email_confirmed_at") != nil,
            displayName: try ImportFields.displayName(name), attributes: metadata, disabled: banned.map { $0 > now } ?? false,
            createdAt: try ImportFields.timestamp(o["created_at"], field: "created_at") ?? now,
            lastSignInAt: try ImportFields.timestamp(o["last_sign_in_at"], field: "last_sign_in_at"))
        if let hash = o["encrypted_password"] as? String, !hash.isEmpty {
            guard Bcrypt.isHash(hash) else { throw ImportProblem("unsupported password hash") }
            if let excess = costBound.excess(hash) { throw ImportProblem("encrypted_password: \(excess)") }
            account.passwordHash = hash
            account.providers = [.password]
        }
        return account
    }
}
