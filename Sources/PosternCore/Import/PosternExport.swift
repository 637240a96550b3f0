import Foundation
import PosternAPI
import PosternCrypto

/// `postern users export`: one JSON object per line and account, every field of the account
/// (hashes as their PHC strings) and the identity providers' subjects linked to it, so that
/// `import --from postern` restores it exactly.
public enum PosternExport {
    /// The JSON Lines line of `account` (no newline), with `identities` (the account's, from
    /// ``ProviderIdentityReader/providerIdentities(uid:)``) as `"identities": [{"provider",
    /// "subject", "email"?, "emailVerified", "createdAt", "lastUsedAt"}]` when it has any.
    public static func line(_ account: Account, identities: [ProviderIdentityLink] = []) -> String {
        var object: [String: Any] = [
            "uid": account.uid, "emailVerified": account.emailVerified, "disabled": account.disabled,
            "createdAt": account.createdAt, "providers": account.providers.map(\.rawValue).sorted(),
            "sessionVersion": account.sessionVersion,
        ]
        if let email = account.email { object["email"] = email.address }
        if let hash = account.passwordHash { object["passwordHash"] = hash }
        if let name = account.displayName { object["displayName"] = name }
        if let attributes = account.attributes { object["attributes"] = attributes }
        if let locale = account.locale { object["locale"] = locale }
        if let last = account.lastSignInAt { object["lastSignInAt"] = last }
        if !identities.isEmpty {
            object["identities"] = identities.map { identity -> [String: Any] in
                var entry: [String: Any] = [
                    "provider": identity.provider, "subject": identity.subject, "emailVerified": identity.emailVerified,
                    "createdAt": identity.createdAt, "lastUsedAt": identity.lastUsedAt,
                ]
                if let email = identity.email { entry["email"] = email.address }
                return entry
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The account a line describes and the identities linked to it (`createdAt` and `lastUsedAt`
    /// of an identity default to the account's creation).
    /// - Throws: `ImportProblem` naming the field that is missing or invalid, as ``account(_:costBound:)``
    ///   and for `identities`: not an array of objects, a provider that is not `apple`, `google` or
    ///   `oidc:<id>`, a subject empty or over 255 bytes, two of one provider.
    static func imported(_ o: [String: Any], costBound: PasswordCostBound) throws(ImportProblem) -> ImportedAccount {
        var imported = ImportedAccount(account: try account(o, costBound: costBound))
        guard let list = o["identities"], !(list is NSNull) else { return imported }
        guard let entries = list as? [[String: Any]] else { throw ImportProblem("invalid identities") }
        for entry in entries {
            guard let name = entry["provider"] as? String, let provider = Provider(rawValue: name), provider.isIdentityProvider else {
                throw ImportProblem("invalid identities provider")
            }
            let email: EmailAddress?
            do { email = try ImportFields.email(entry["email"] as? String) } catch { throw ImportProblem("invalid identities email") }
            try imported.link(
                provider, subject: entry["subject"] as? String, email: email,
                emailVerified: try ImportFields.bool(entry["emailVerified"], field: "identities emailVerified"),
                createdAt: try ImportFields.seconds(entry["createdAt"], field: "identities createdAt"),
                lastUsedAt: try ImportFields.seconds(entry["lastUsedAt"], field: "identities lastUsedAt"), field: "identities")
        }
        return imported
    }

    /// The account a line describes; a password hash costing more than `costBound` is refused.
    /// - Throws: `ImportProblem` naming the field that is missing or invalid.
    static func account(_ o: [String: Any], costBound: PasswordCostBound) throws(ImportProblem) -> Account {
        guard let created = try ImportFields.seconds(o["createdAt"], field: "createdAt") else {
            throw ImportProblem("invalid createdAt (from 1970 to 9999)")
        }
        var providers: Set<Provider> = []
        for name in o["providers"] as? [String] ?? [] {
            guard let provider = Provider(rawValue: name) else { throw ImportProblem("invalid providers") }
            providers.insert(provider)
        }
        let hash = o["passwordHash"] as? String
        if let hash {
            switch PasswordScheme(of: hash) {
            case nil: throw ImportProblem("unsupported password hash")
            case .scrypt?: if !PasswordHasher.isHash(hash) { throw ImportProblem("scrypt parameters out of bounds (ln ≤ 20, r ≤ 16, p ≤ 4, 128·r·2^ln ≤ 1 GiB)") }
            case .firebaseScrypt?:
                if (try? FirebaseStoredHash(hash)) == nil {
                    throw ImportProblem("invalid Firebase password hash (rounds 1 to 8, mem cost 1 to 14, as Firebase issues them)")
                }
            case .bcrypt?: break
            }
            if let excess = costBound.excess(hash) { throw ImportProblem("passwordHash: \(excess)") }
        }
        let locale = o["locale"] as? String
        if let locale, FlowContext.cleanLocale(locale) != locale { throw ImportProblem("invalid locale") }
        let attributes = o["attributes"] as? String
        if let attributes {
            guard attributes.utf8.count <= WireLimits.attributesMaximumBytes,
                (try? JSONSerialization.jsonObject(with: Data(attributes.utf8))) is [String: Any]
            else { throw ImportProblem("attributes not a JSON object of at most 4 KiB") }
        }
        return Account(
            uid: try ImportFields.uid(o["uid"] as? String), email: try ImportFields.email(o["email"] as? String),
            emailVerified: try ImportFields.bool(o["emailVerified"], field: "emailVerified"), passwordHash: hash,
            displayName: try ImportFields.displayName(o["displayName"] as? String), attributes: attributes, locale: locale,
            disabled: try ImportFields.bool(o["disabled"], field: "disabled"), createdAt: created,
            lastSignInAt: try ImportFields.seconds(o["lastSignInAt"], field: "lastSignInAt"), providers: providers,
            sessionVersion: try ImportFields.counter(o["sessionVersion"], field: "sessionVersion") ?? 0)
    }
}
