import Foundation
import PosternAPI
import PosternCrypto

/// The relying parties of `--oidc-clients FILE`, by client id. Configuration: read at start, never
/// written by Postern. The caller reads the file; this only parses it (Core does no I/O).
public struct OIDCClients: Sendable, Hashable {
    /// Every client, in the file's order.
    public let clients: [OIDCClient]

    /// The client `clientID`, if registered.
    public func client(id clientID: String) -> OIDCClient? { clients.first { $0.clientID == clientID } }

    /// The most clients one file may hold.
    static let maximumClients = 1_000
    /// The most redirect URIs (and post-logout ones) one client may register.
    static let maximumURIs = 50
    /// The longest redirect URI.
    static let maximumURILength = 2_000

    /// Parses the file's contents: `{"clients": [{clientId, name?, secretHash | public: true,
    /// redirectUris, postLogoutRedirectUris?, scopes?, firstParty?, allowNoPkce?}, …]}`.
    /// - Throws: `SettingsError` naming the client (by position and id) and the field that is
    ///   wrong, and what it must be; never quoting a `secretHash` or a `secret`.
    public static func load(_ contents: Data) throws(SettingsError) -> OIDCClients {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: contents)
        } catch {
            throw SettingsError("--oidc-clients: the file is not JSON")
        }
        guard case .object(let top) = root else { throw SettingsError("--oidc-clients: the file must be a JSON object {\"clients\": [...]}") }
        if let unknown = top.keys.sorted().first(where: { $0 != "clients" }) {
            throw SettingsError("--oidc-clients: unknown field \(unknown.debugDescription) (the file has only \"clients\")")
        }
        guard case .array(let entries)? = top["clients"] else { throw SettingsError("--oidc-clients: \"clients\" must be an array of clients") }
        guard !entries.isEmpty else { throw SettingsError("--oidc-clients: \"clients\" is empty: register a client, or leave --oidc-clients out") }
        guard entries.count <= maximumClients else { throw SettingsError("--oidc-clients: more than \(maximumClients) clients") }
        var clients: [OIDCClient] = []
        for (index, entry) in entries.enumerated() {
            let client = try parseClient(entry, index: index)
            guard !clients.contains(where: { $0.clientID == client.clientID }) else {
                throw SettingsError("--oidc-clients: clients[\(index)]: clientId \(client.clientID.debugDescription) is registered twice")
            }
            clients.append(client)
        }
        return OIDCClients(clients: clients)
    }

    static let clientFields: Set<String> = [
        "clientId", "name", "secretHash", "public", "redirectUris", "postLogoutRedirectUris", "scopes", "firstParty", "allowNoPkce",
    ]

    private static func parseClient(_ entry: JSONValue, index: Int) throws(SettingsError) -> OIDCClient {
        var at = "--oidc-clients: clients[\(index)]"
        guard case .object(let fields) = entry else { throw SettingsError("\(at) must be an object") }
        guard case .string(let clientID)? = fields["clientId"] else { throw SettingsError("\(at): clientId is missing or not a string") }
        guard (1...128).contains(clientID.utf8.count), clientID.utf8.allSatisfy(isUnreserved) else {
            throw SettingsError("\(at): clientId must be 1 to 128 of A-Z a-z 0-9 . _ ~ -")
        }
        at += " (\(clientID.debugDescription))"
        if fields["secret"] != nil {
            throw SettingsError("\(at): \"secret\" is not read: the file holds only secretHash, the secret's \(OIDCClient.secretHashPrefix) hash")
        }
        if let unknown = fields.keys.sorted().first(where: { !clientFields.contains($0) }) {
            throw SettingsError("\(at): unknown field \(unknown.debugDescription)")
        }
        let name = try string(fields["name"], "name", at) ?? clientID
        guard !name.isEmpty, name.count <= 256, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw SettingsError("\(at): name must be 1 to 256 characters on one line")
        }
        let isPublic = try bool(fields["public"], "public", at) ?? false
        let authentication: OIDCClient.Authentication
        switch (try string(fields["secretHash"], "secretHash", at), isPublic) {
        case (nil, false): throw SettingsError("\(at): give secretHash (a confidential client) or \"public\": true (PKCE alone)")
        case (.some, true): throw SettingsError("\(at): a public client has no secretHash")
        case (nil, true): authentication = .publicClient
        case (let hash?, false):
            guard hash.hasPrefix(OIDCClient.secretHashPrefix),
                let digest = Base64URL.decode(hash.dropFirst(OIDCClient.secretHashPrefix.count)), digest.count == 32
            else { throw SettingsError("\(at): secretHash must be \(OIDCClient.secretHashPrefix) and the secret's SHA-256 in base64url (43 characters)") }
            authentication = .secretHash(digest)
        }
        let redirects = try uris(fields["redirectUris"], "redirectUris", at, publicClient: isPublic)
        guard !redirects.isEmpty else { throw SettingsError("\(at): redirectUris needs at least one URI") }
        let logouts = try uris(fields["postLogoutRedirectUris"], "postLogoutRedirectUris", at, publicClient: isPublic)
        let scopes = try strings(fields["scopes"], "scopes", at) ?? OIDCClient.defaultScopes
        if let unknown = scopes.first(where: { !OIDCClient.knownScopes.contains($0) }) {
            throw SettingsError("\(at): scopes: \(unknown.debugDescription) is not one of \(OIDCClient.knownScopes.joined(separator: ", "))")
        }
        guard scopes.contains("openid") else { throw SettingsError("\(at): scopes must include openid") }
        let allowNoPKCE = try bool(fields["allowNoPkce"], "allowNoPkce", at) ?? false
        guard !(allowNoPKCE && isPublic) else { throw SettingsError("\(at): allowNoPkce is for confidential clients only: a public client has PKCE alone") }
        return OIDCClient(
            clientID: clientID, name: name, authentication: authentication, redirectURIs: redirects, postLogoutRedirectURIs: logouts,
            scopes: scopes.reduce(into: []) { kept, scope in if !kept.contains(scope) { kept.append(scope) } },
            firstParty: try bool(fields["firstParty"], "firstParty", at) ?? false, allowNoPKCE: allowNoPKCE)
    }

    private static func string(_ value: JSONValue?, _ field: String, _ at: String) throws(SettingsError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw SettingsError("\(at): \(field) must be a string")
        }
    }

    private static func bool(_ value: JSONValue?, _ field: String, _ at: String) throws(SettingsError) -> Bool? {
        switch value {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw SettingsError("\(at): \(field) must be true or false")
        }
    }

    private static func strings(_ value: JSONValue?, _ field: String, _ at: String) throws(SettingsError) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .array(let items)?:
            var out: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item else { throw SettingsError("\(at): \(field)[\(index)] must be a string") }
                out.append(text)
            }
            return out
        default: throw SettingsError("\(at): \(field) must be an array of strings")
        }
    }

    private static func uris(_ value: JSONValue?, _ field: String, _ at: String, publicClient: Bool) throws(SettingsError) -> [String] {
        let list = try strings(value, field, at) ?? []
        guard list.count <= maximumURIs else { throw SettingsError("\(at): \(field) holds more than \(maximumURIs) URIs") }
        for (index, uri) in list.enumerated() {
            if let problem = redirectURIProblem(uri, publicClient: publicClient) {
                throw SettingsError("\(at): \(field)[\(index)] \(uri.debugDescription): \(problem)")
            }
        }
        return list
    }

    /// Why `uri` cannot be registered as a redirect URI, or nil when it can: absolute, without a
    /// fragment, user information, spaces or control characters; `https` with a host; `http` only
    /// on a loopback address (`127.0.0.1`, `[::1]`: RFC 8252 §7.3, `localhost` refused as §8.3
    /// advises); or, for a public client, a private-use scheme with a dot (`com.example.app:/cb`,
    /// RFC 8252 §7.1).
    static func redirectURIProblem(_ uri: String, publicClient: Bool) -> String? {
        guard uri.utf8.count <= maximumURILength else { return "longer than \(maximumURILength) bytes" }
        guard uri.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return "must be printable ASCII without spaces (percent-encode the rest)"
        }
        guard !uri.contains("#") else { return "must not have a fragment (#)" }
        guard !uri.contains("\\") else { return "must not contain a backslash" }
        guard let colon = uri.firstIndex(of: ":") else { return "must be absolute (https://…)" }
        let scheme = uri[..<colon]
        guard let first = scheme.utf8.first, isLowerLetter(first),
            scheme.utf8.allSatisfy({ isLowerLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return "the scheme must be lower-case letters, digits, + - ." }
        let rest = uri[uri.index(after: colon)...]
        switch scheme {
        case "https", "http":
            guard rest.hasPrefix("//") else { return "must be \(scheme)://host/…" }
            let afterSlashes = rest.dropFirst(2)
            let authority = afterSlashes.prefix { $0 != "/" && $0 != "?" }
            guard !authority.contains("@") else { return "must not carry user information (@)" }
            guard !authority.contains("%") else { return "the host must not be percent-encoded" }
            guard !authority.isEmpty else { return "needs a host" }
            if scheme == "http" {
                guard LoopbackURI(uri) != nil else {
                    return "http only on a loopback address, 127.0.0.1 or [::1] (any port matches); elsewhere https"
                }
            } else {
                guard hostAndPortValid(authority) else { return "the host must be a name, an IPv4 address or an [IPv6] address, with an optional port" }
            }
            return nil
        default:
            guard publicClient else { return "a confidential client's redirect URI must be https (or http on loopback)" }
            guard scheme.contains(".") else { return "a private-use scheme must be reverse-DNS with a dot (com.example.app:/callback)" }
            guard !rest.hasPrefix("//") else { return "a private-use scheme takes one slash: \(scheme):/path" }
            return nil
        }
    }

    private static func hostAndPortValid(_ authority: Substring) -> Bool {
        var host = authority
        var port: Substring = ""
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return false }
                port = after.dropFirst()
            }
            guard !host.isEmpty, host.utf8.allSatisfy({ isHex($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return false }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                port = authority[authority.index(after: colon)...]
                guard !port.isEmpty else { return false }
            }
            guard !host.isEmpty,
                host.utf8.allSatisfy({ AppLinkCharacters.isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
            else { return false }
        }
        if !port.isEmpty {
            guard port.utf8.count <= 5, port.utf8.allSatisfy(isDigit), let number = Int(port), number <= 65_535 else { return false }
        }
        return true
    }

    private static func isLowerLetter(_ byte: UInt8) -> Bool { AppLinkCharacters.isLetter(byte) && !AppLinkCharacters.isUpper(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { AppLinkCharacters.isDigit(byte) }
    private static func isHex(_ byte: UInt8) -> Bool { AppLinkCharacters.isHex(byte) }
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        AppLinkCharacters.isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "-")
    }
}
