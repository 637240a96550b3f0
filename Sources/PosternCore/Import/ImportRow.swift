import Foundation
import PosternAPI

/// One row of an export file: the account it describes, or why it cannot be imported, with the
/// line it starts on, and the identity providers' subjects linked to it. Never holds a password; a
/// hash only inside the account.
public struct ImportRow: Sendable {
    /// The 1-based line of the file the row starts on.
    public let line: Int
    /// The account, or the problem.
    public let content: Result<Account, ImportProblem>
    /// The account's identities (Sign in with Apple, Google, …), each with the account's uid, at
    /// most one per provider (the readers refuse a row with two); empty when `content` is a problem.
    public let identities: [ProviderIdentityLink]

    /// Creates a row; `identities` are given the account's uid.
    public init(line: Int, _ content: Result<Account, ImportProblem>, identities: [ProviderIdentityLink] = []) {
        self.line = line
        self.content = content
        switch content {
        case .success(let account):
            self.identities = identities.map { identity in
                var linked = identity
                linked.uid = account.uid
                return linked
            }
        case .failure: self.identities = []
        }
    }

    /// A row from what a reader made of it: the account and its identities, or the problem.
    init(line: Int, read: Result<ImportedAccount, ImportProblem>) {
        switch read {
        case .success(let imported): self.init(line: line, .success(imported.account), identities: imported.identities)
        case .failure(let problem): self.init(line: line, .failure(problem))
        }
    }
}

/// What a reader makes of one row: the account, and the identities linked to it.
struct ImportedAccount {
    var account: Account
    var identities: [ProviderIdentityLink] = []

    /// Links an identity of `provider` (`apple`, `google`, `oidc:<id>`) to the account, which
    /// then lists the provider among its `providers` (as a sign-in with it would).
    /// - Throws: `ImportProblem` (naming `field`) when the subject is empty or longer than 255
    ///   bytes (OpenID Connect Core §2 bounds `sub` so), or the account holds an identity of that
    ///   provider already.
    mutating func link(
        _ provider: Provider, subject: String?, email: EmailAddress?, emailVerified: Bool, createdAt: Int64? = nil, lastUsedAt: Int64? = nil,
        field: String
    ) throws(ImportProblem) {
        guard let subject, !subject.isEmpty, subject.utf8.count <= 255, ProfileFlow.isOneLine(subject) else {
            throw ImportProblem("invalid \(field) subject")
        }
        guard !identities.contains(where: { $0.provider == provider.rawValue }) else { throw ImportProblem("two \(field) of one provider") }
        let created = createdAt ?? account.createdAt
        identities.append(ProviderIdentityLink(
            provider: provider.rawValue, subject: subject, uid: account.uid, email: email, emailVerified: emailVerified,
            createdAt: created, lastUsedAt: lastUsedAt ?? created))
        account.providers.insert(provider)
    }
}

/// Why a row is malformed: a short reason that names a field, never its value (a value may be a
/// hash or an address).
public struct ImportProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason, for example "invalid email" or "unsupported password hash".
    public let reason: String

    /// A problem with this reason.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// The export formats `postern users import` reads.
public enum ImportSource: String, Sendable, CaseIterable {
    /// `firebase auth:export` (JSON or CSV); hashes in Firebase's modified scrypt.
    case firebase
    /// Rows of Supabase's `auth.users` (JSON array, JSON Lines or CSV with a header); bcrypt hashes.
    case supabase
    /// `postern users export` (JSON Lines).
    case postern
}

/// Checks shared by the readers.
enum ImportFields {
    /// An address, parsed; nil for none.
    static func email(_ text: String?) throws(ImportProblem) -> EmailAddress? {
        guard let text, !text.isEmpty else { return nil }
        do { return try EmailAddress.parse(text) } catch { throw ImportProblem("invalid email") }
    }

    /// A uid: 1 to 128 printable ASCII characters.
    static func uid(_ text: String?) throws(ImportProblem) -> String {
        guard let text, !text.isEmpty else { throw ImportProblem("missing uid") }
        guard text.utf8.count <= 128, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { throw ImportProblem("invalid uid") }
        return text
    }

    /// A display name without control characters, at most 256 bytes; nil for none.
    static func displayName(_ text: String?) throws(ImportProblem) -> String? {
        guard let text, !text.isEmpty else { return nil }
        guard text.utf8.count <= 256, ProfileFlow.isOneLine(text) else {
            throw ImportProblem("invalid displayName")
        }
        return text
    }

    /// App attributes: a JSON object of at most 4 KiB, re-encoded compactly; nil for none.
    static func attributes(_ value: Any?) throws(ImportProblem) -> String? {
        var object: Any? = value
        if let text = value as? String {
            guard !text.isEmpty else { return nil }
            object = try? JSONSerialization.jsonObject(with: Data(text.utf8))
        }
        guard let object, !(object is NSNull) else { return nil }
        guard let dictionary = object as? [String: Any] else { throw ImportProblem("attributes not a JSON object") }
        guard !dictionary.isEmpty else { return nil }
        guard let data = try? JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys]),
            data.count <= WireLimits.attributesMaximumBytes
        else { throw ImportProblem("attributes over 4 KiB") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The last second an imported time may name: 9999-12-31T23:59:59Z. Times are kept from
    /// 1970 to then, so that no arithmetic or calendar on them can overflow.
    static let latestSeconds: Int64 = 253_402_300_799

    /// `seconds` when it lies from 1970 to the year 9999.
    /// - Throws: `ImportProblem` naming `field` and the range.
    static func inRange(_ seconds: Int64, field: String) throws(ImportProblem) -> Int64 {
        guard (0...latestSeconds).contains(seconds) else { throw ImportProblem("invalid \(field) (from 1970 to 9999)") }
        return seconds
    }

    /// Milliseconds since 1970 (a number or a decimal string) as seconds, up to the year 9999;
    /// nil for none.
    static func milliseconds(_ value: Any?, field: String) throws(ImportProblem) -> Int64? {
        guard let value, !(value is NSNull) else { return nil }
        if let text = value as? String {
            guard !text.isEmpty else { return nil }
            guard let ms = Int64(text), ms >= 0 else { throw ImportProblem("invalid \(field)") }
            return try inRange(ms / 1000, field: field)
        }
        guard let number = value as? NSNumber, let ms = Int64(exactly: number.doubleValue), ms >= 0 else {
            throw ImportProblem("invalid \(field)")
        }
        return try inRange(ms / 1000, field: field)
    }

    /// Seconds since 1970 (a JSON integer, as `postern users export` writes them), up to the
    /// year 9999; nil for none.
    static func seconds(_ value: Any?, field: String) throws(ImportProblem) -> Int64? {
        guard let value, !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, let seconds = Int64(exactly: number.doubleValue), number.int64Value == seconds else {
            throw ImportProblem("invalid \(field) (from 1970 to 9999)")
        }
        return try inRange(seconds, field: field)
    }

    /// The largest integer every JSON reader keeps exactly (2^53 - 1).
    static let counterMaximum: Int64 = (1 << 53) - 1

    /// A counter or version (an account's `sessionVersion`): a JSON integer from 0 to 2^53 - 1;
    /// nil for none. A legitimate export is far below (one step per revocation of every
    /// session); the bound keeps a planted value near `Int64.max` out of the database.
    static func counter(_ value: Any?, field: String) throws(ImportProblem) -> Int64? {
        guard let value, !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, let integer = Int64(exactly: number.doubleValue),
            (0...counterMaximum).contains(integer), number.int64Value == integer
        else { throw ImportProblem("invalid \(field) (an integer from 0 to 2^53 - 1)") }
        return integer
    }

    /// A boolean (JSON true/false, or the text true/false/1/0 of a CSV cell).
    static func bool(_ value: Any?, field: String) throws(ImportProblem) -> Bool {
        guard let value, !(value is NSNull) else { return false }
        if let text = value as? String {
            switch text.lowercased() {
            case "", "false", "0", "f": return false
            case "true", "1", "t": return true
            default: throw ImportProblem("invalid \(field)")
            }
        }
        guard let number = value as? NSNumber else { throw ImportProblem("invalid \(field)") }
        return number.boolValue
    }

    /// A PostgreSQL or ISO 8601 timestamp (`2024-05-01 10:20:30.123456+00`, `…T…Z`) as seconds;
    /// nil for none.
    static func timestamp(_ value: Any?, field: String) throws(ImportProblem) -> Int64? {
        guard let value, !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw ImportProblem("invalid \(field)") }
        if text.isEmpty { return nil }
        var normalized = text.replacingOccurrences(of: " ", with: "T")
        // Fractional seconds are dropped: accounts keep whole seconds.
        if let dot = normalized.firstIndex(of: ".") {
            let rest = normalized[normalized.index(after: dot)...]
            let zone = rest.drop { $0.isNumber }
            normalized = String(normalized[..<dot]) + zone
        }
        if normalized.hasSuffix("+00") || normalized.hasSuffix("-00") { normalized += ":00" }
        if !normalized.hasSuffix("Z") && !normalized.dropFirst(19).contains(where: { $0 == "+" || $0 == "-" }) { normalized += "Z" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: normalized) else { throw ImportProblem("invalid \(field)") }
        return try inRange(Int64(date.timeIntervalSince1970), field: field)
    }
}
