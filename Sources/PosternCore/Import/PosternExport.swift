import Foundation
import PosternAPI
import PosternCrypto

/// `postern users export`: one JSON object per line and account, every field of the account
/// (hashes as their PHC strings), so that `import --from postern` restores it exactly.
public enum PosternExport {
    /// The JSON Lines line of `account` (no newline).
    public static func line(_ account: Account) -> String {
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
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
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
