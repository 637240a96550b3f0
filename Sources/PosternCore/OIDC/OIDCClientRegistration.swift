import PosternAPI
import PosternCrypto

/// What an operator registers a relying party with (`postern oidc clients add`,
/// `POST /v1/admin/oidc/clients`), before it is checked. ``validated()`` applies the rules every
/// registration meets; the client id and the secret are Postern's to make (``OIDCClientRegistry``).
public struct OIDCClientRegistration: Sendable, Hashable {
    /// The name the consent screen shows.
    public var name: String
    /// Where the authorization response may go (at least one).
    public var redirectURIs: [String]
    /// A public client (a native app, a single-page app): PKCE alone, no secret.
    public var isPublic: Bool
    /// No consent screen.
    public var firstParty: Bool
    /// Where RP-initiated logout may send the browser back to.
    public var postLogoutRedirectURIs: [String]
    /// May leave out PKCE (confidential clients only); must send `nonce` then.
    public var allowNoPKCE: Bool
    /// What it may ask for; nil for ``OIDCClient/defaultScopes``.
    public var scopes: [String]?
    /// The JWS algorithm of its tokens, by name (`ES256`, `RS256`); nil for ES256.
    public var idTokenSignedResponseAlg: String?

    public init(
        name: String, redirectURIs: [String], isPublic: Bool = false, firstParty: Bool = false, postLogoutRedirectURIs: [String] = [],
        allowNoPKCE: Bool = false, scopes: [String]? = nil, idTokenSignedResponseAlg: String? = nil
    ) {
        self.name = name
        self.redirectURIs = redirectURIs
        self.isPublic = isPublic
        self.firstParty = firstParty
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.allowNoPKCE = allowNoPKCE
        self.scopes = scopes
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
    }

    /// The algorithm its tokens are signed with: the one named, ES256 when none is (nil for a
    /// name that is not one of ``JSONWebToken/Algorithm``, which ``validated()`` refuses).
    public var signingAlgorithm: JSONWebToken.Algorithm? {
        guard let name = idTokenSignedResponseAlg else { return .es256 }
        return JSONWebToken.Algorithm(rawValue: name)
    }

    /// The longest name.
    public static let maximumNameLength = 256
    /// The most redirect URIs (and post-logout ones) one client may register.
    public static let maximumURIs = 50
    /// The longest redirect URI.
    public static let maximumURILength = OIDCClientRequestBody.uriMaximumLength

    /// The registration checked: the scopes given (each once, in their order) or the defaults.
    /// - Throws: ``OIDCClientRegistrationError`` naming the first field that is wrong (and, in a
    ///   list, which entry) and what it must be.
    public func validated() throws(OIDCClientRegistrationError) -> OIDCClientRegistration {
        guard !name.isEmpty, name.count <= Self.maximumNameLength,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw OIDCClientRegistrationError(.name, "must be 1 to \(Self.maximumNameLength) characters on one line") }
        guard !redirectURIs.isEmpty else { throw OIDCClientRegistrationError(.redirectURIs, "needs at least one URI") }
        try Self.checkURIs(redirectURIs, .redirectURIs, publicClient: isPublic)
        try Self.checkURIs(postLogoutRedirectURIs, .postLogoutRedirectURIs, publicClient: isPublic)
        let scopes = self.scopes ?? OIDCClient.defaultScopes
        if let (index, unknown) = scopes.enumerated().first(where: { !OIDCClient.knownScopes.contains($0.element) }) {
            throw OIDCClientRegistrationError(
                .scopes, index: index, "\(unknown.debugDescription) is not one of \(OIDCClient.knownScopes.joined(separator: ", "))")
        }
        guard !(allowNoPKCE && isPublic) else {
            throw OIDCClientRegistrationError(.allowNoPKCE, "is for confidential clients only: a public client has PKCE alone")
        }
        guard signingAlgorithm != nil else {
            throw OIDCClientRegistrationError(
                .idTokenSignedResponseAlg, "must be \(JSONWebToken.Algorithm.allCases.map(\.rawValue).joined(separator: " or "))")
        }
        var checked = self
        // openid is every client's (an OpenID Connect request must ask for it): listed or not, it is first.
        checked.scopes = (["openid"] + scopes).reduce(into: []) { kept, scope in if !kept.contains(scope) { kept.append(scope) } }
        return checked
    }

    private static func checkURIs(
        _ list: [String], _ field: OIDCClientRegistrationError.Field, publicClient: Bool
    ) throws(OIDCClientRegistrationError) {
        guard list.count <= maximumURIs else { throw OIDCClientRegistrationError(field, "holds more than \(maximumURIs) URIs") }
        for (index, uri) in list.enumerated() {
            if let problem = redirectURIProblem(uri, publicClient: publicClient) { throw OIDCClientRegistrationError(field, index: index, problem) }
        }
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
}

/// A registration field that is wrong: which (and which entry of a list) and why. Names the field
/// by its wire name (`redirectUris[1]`); the command line names its option instead (``field``,
/// ``index``). Never holds a secret (a registration has none).
public struct OIDCClientRegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field of ``OIDCClientRegistration``, by its name in the admin API's body.
    public enum Field: String, Sendable, Hashable, CaseIterable {
        case name
        case redirectURIs = "redirectUris"
        case postLogoutRedirectURIs = "postLogoutRedirectUris"
        case scopes
        case allowNoPKCE = "allowNoPkce"
        case idTokenSignedResponseAlg
    }

    public let field: Field
    /// The entry of a list that is wrong; nil for the field as a whole.
    public let index: Int?
    /// What it must be.
    public let reason: String

    init(_ field: Field, index: Int? = nil, _ reason: String) {
        self.field = field
        self.index = index
        self.reason = reason
    }

    /// `redirectUris[1]: must not have a fragment (#)`.
    public var description: String { field.rawValue + (index.map { "[\($0)]" } ?? "") + ": " + reason }
}
