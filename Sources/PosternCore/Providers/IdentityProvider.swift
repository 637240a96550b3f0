import Foundation

/// An identity provider whose ID tokens sign people in (`--identity-providers FILE`): Apple,
/// Google, or another OpenID provider, as docs/providers.md describes.
public struct IdentityProvider: Sendable, Hashable {
    /// Which rules apply beyond OpenID Connect's.
    public enum Kind: Sendable, Hashable {
        /// Sign in with Apple: the token's `nonce` is the SHA-256 (hex) of the app's raw nonce.
        case apple
        /// Google: two spellings of its issuer.
        case google
        /// Any other OpenID provider, found by its issuer's discovery document.
        case openID
    }

    /// The `id` of the file's entry: `apple`, `google`, or the operator's name for another provider.
    public let id: String
    /// Apple, Google or another.
    public let kind: Kind
    /// The `iss` values its tokens may carry.
    public let issuers: [String]
    /// The `aud` values accepted: the app's bundle and services ids, or OAuth client ids.
    public let audiences: [String]
    /// Where its keys are; nil for an OpenID provider whose discovery document names them.
    public let jwksURI: String?
    /// The web flow's client id, nil when the hosted page shows no button for it.
    public let clientID: String?
    /// The file holding the web flow's client secret (read at start-up, never here).
    public let clientSecretFile: String?

    /// How the account's `providers` names it: `apple`, `google`, `oidc:<id>`.
    public var accountProviderName: String {
        switch kind {
        case .apple: "apple"
        case .google: "google"
        case .openID: "oidc:\(id)"
        }
    }

    /// Apple's issuer and published keys.
    static let appleIssuer = "https://appleid.apple.com"
    static let appleKeys = "https://appleid.apple.com/auth/keys"
    /// Google's two issuer spellings (its discovery document names the first; tokens carry either).
    static let googleIssuers = ["https://accounts.google.com", "accounts.google.com"]
    static let googleKeys = "https://www.googleapis.com/oauth2/v3/certs"
    /// The longest `id`: it becomes part of stored provider names.
    static let maximumIDLength = 32

    /// 1 to 32 lower-case letters, digits, `-` or `_`: an entry's `id`.
    static func isValidID(_ id: String) -> Bool {
        let allowed = { (byte: UInt8) in
            (AppLinkCharacters.isLetter(byte) && !AppLinkCharacters.isUpper(byte)) || AppLinkCharacters.isDigit(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        return !id.isEmpty && id.utf8.count <= maximumIDLength && id.utf8.allSatisfy(allowed)
    }

    /// Reads the JSON array of `--identity-providers FILE`.
    /// - Throws: `SettingsError` naming the entry and the field that is missing or wrong (never a
    ///   secret: the file names the secret's file, it does not hold it), or a repeated `id`.
    public static func parseList(_ json: Data) throws(SettingsError) -> [IdentityProvider] {
        guard let entries = try? JSONSerialization.jsonObject(with: json) as? [Any] else {
            throw SettingsError("--identity-providers: must hold a JSON array of providers")
        }
        var providers: [IdentityProvider] = []
        for (index, entry) in entries.enumerated() {
            guard let object = entry as? [String: Any] else { throw SettingsError("--identity-providers: entry \(index + 1) is not an object") }
            let provider = try IdentityProvider(object, number: index + 1)
            if providers.contains(where: { $0.id == provider.id }) {
                throw SettingsError("--identity-providers: \(provider.id.debugDescription) appears twice")
            }
            providers.append(provider)
        }
        return providers
    }

    /// One entry; `number` counts from 1, for the messages.
    init(_ object: [String: Any], number: Int) throws(SettingsError) {
        let known: Set<String> = ["id", "issuer", "audiences", "jwksUri", "clientId", "clientSecretFile"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw SettingsError("--identity-providers entry \(number): unknown field \(unknown.debugDescription)")
        }
        guard let id = object["id"] as? String, Self.isValidID(id) else {
            throw SettingsError("--identity-providers entry \(number): \"id\" must be 1 to 32 lower-case letters, digits, - or _ (apple, google, or a name of yours)")
        }
        let place = "--identity-providers entry \(number) (\(id))"
        func text(_ field: String) throws(SettingsError) -> String? {
            guard let value = object[field] else { return nil }
            guard let string = value as? String, !string.isEmpty else { throw SettingsError("\(place): \"\(field)\" must be a non-empty string") }
            return string
        }
        func url(_ field: String) throws(SettingsError) -> String? {
            guard let value = try text(field) else { return nil }
            guard value.hasPrefix("https://"), !ProviderURL.authority(of: value).isEmpty, !ProviderURL.carriesCredentials(value), !value.contains("#") else {
                throw SettingsError("\(place): \"\(field)\" must be an https URL without credentials or fragment")
            }
            return value
        }
        let kind: Kind = id == "apple" ? .apple : id == "google" ? .google : .openID
        let issuer = try url("issuer")
        switch (kind, issuer) {
        case (.apple, nil): issuers = [Self.appleIssuer]
        case (.google, nil): issuers = Self.googleIssuers
        case (.openID, nil): throw SettingsError("\(place): needs \"issuer\", the provider's https issuer URL")
        case (_, let issuer?): issuers = [issuer]
        }
        guard let list = object["audiences"] as? [Any], !list.isEmpty else {
            throw SettingsError("\(place): needs \"audiences\", a non-empty array of the client or bundle ids its tokens are for")
        }
        var audiences: [String] = []
        for item in list {
            guard let audience = item as? String, !audience.isEmpty else { throw SettingsError("\(place): \"audiences\" must hold non-empty strings") }
            if !audiences.contains(audience) { audiences.append(audience) }
        }
        let clientID = try text("clientId")
        if let clientID, !audiences.contains(clientID) {
            throw SettingsError("\(place): \"clientId\" must be one of \"audiences\" (the web flow's tokens are for it)")
        }
        let clientSecretFile = try text("clientSecretFile")
        if clientSecretFile != nil, clientID == nil { throw SettingsError("\(place): \"clientSecretFile\" needs \"clientId\"") }
        let keys = try url("jwksUri")
        switch kind {
        case .apple: jwksURI = keys ?? Self.appleKeys
        case .google: jwksURI = keys ?? Self.googleKeys
        case .openID: jwksURI = keys
        }
        self.id = id
        self.kind = kind
        self.audiences = audiences
        self.clientID = clientID
        self.clientSecretFile = clientSecretFile
    }
}
