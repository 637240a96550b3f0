import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern oidc clients add|list|remove|rotate-secret`: the OpenID Connect provider's relying parties.
struct OIDCCommand: Subcommand {
    static let name = "oidc"
    static let abstract = "OpenID Connect clients: register, list, remove, rotate a secret"
    static let usage = """
        Usage: postern oidc clients add --name NAME --redirect-uri URI [--redirect-uri URI …]
                   [--public] [--first-party] [--post-logout-redirect-uri URI …] [--allow-no-pkce]
                   [--scope SCOPE …] [--id-token-alg ES256|RS256] [--json]
               postern oidc clients list [--json]
               postern oidc clients remove CLIENT_ID
               postern oidc clients rotate-secret CLIENT_ID [--json]

        add            registers a relying party (Grafana, Gitea, oauth2-proxy, …) and prints its
                       client id and, for a confidential client, its client secret: shown this
                       once, the database keeps only its SHA-256. Give each URI with its own option.
                       A redirect URI is https, or http on 127.0.0.1 or [::1] (any port matches;
                       localhost is refused), or for a --public client a private-use scheme with a
                       dot (com.example.app:/callback); never a fragment or user information; it is
                       compared byte for byte. --public: a native or single-page app, PKCE alone,
                       no secret. --first-party: no consent screen. --allow-no-pkce (confidential
                       clients only): it may leave out PKCE and must send a nonce then. --scope:
                       openid, email, profile, offline_access (default openid email profile).
                       --id-token-alg: how its ID tokens and access tokens are signed, ES256
                       (the default) or RS256 for a relying party that takes nothing else.
        list           the registered clients, oldest first; never a secret.
        remove         removes a client: its consents and authorization codes are deleted and the
                       refresh tokens issued to it revoked (its users sign in again).
        rotate-secret  prints a new secret for a confidential client; the old one stops at once.

        The same as POST/GET /v1/admin/oidc/clients (docs/API.md); a running daemon sees a change
        with its next request.

        """

    static let options: [OptionDeclaration] = [
        .value("name", "NAME", "add: what the consent screen shows"),
        .value("redirect-uri", "URI", "add: a redirect URI (give the option once for each)"),
        .flag("public", "add: a public client (PKCE alone, no secret)"),
        .flag("first-party", "add: no consent screen"),
        .value("post-logout-redirect-uri", "URI", "add: where logout may return to (once for each)"),
        .flag("allow-no-pkce", "add: a confidential client that may leave out PKCE"),
        .value("scope", "SCOPE", "add: a scope it may ask for (once for each; default openid email profile)"),
        .value("id-token-alg", "ALG", "add: ES256 (default) or RS256, the algorithm of its ID tokens and access tokens"),
        .flag("json", "add, list, rotate-secret: print JSON"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows)
    static let actions = ["clients"]
    static let clientActions = ["add", "list", "remove", "rotate-secret"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The registration the options describe (`add`).
    var registration: OIDCClientRegistration {
        OIDCClientRegistration(
            name: arguments.options["name"] ?? "", redirectURIs: arguments.optionValues["redirect-uri"] ?? [],
            isPublic: arguments.switches.contains("public"), firstParty: arguments.switches.contains("first-party"),
            postLogoutRedirectURIs: arguments.optionValues["post-logout-redirect-uri"] ?? [],
            allowNoPKCE: arguments.switches.contains("allow-no-pkce"), scopes: arguments.optionValues["scope"],
            idTokenSignedResponseAlg: arguments.options["id-token-alg"])
    }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        let words = arguments.words
        guard words.count >= 3, words[1] == "clients", Self.clientActions.contains(words[2]) else {
            throw CommandFailure(code: .usage, message: "oidc needs clients add, list, remove or rotate-secret; see postern oidc --help")
        }
        let action = words[2]
        let wanted = action == "add" || action == "list" ? 3 : 4
        guard words.count == wanted else {
            throw CommandFailure(
                code: .usage, message: wanted == 3 ? "oidc clients \(action) takes no argument" : "oidc clients \(action) needs one CLIENT_ID")
        }
        let addOnly = ["name", "redirect-uri", "public", "first-party", "post-logout-redirect-uri", "allow-no-pkce", "scope", "id-token-alg"]
        if action != "add", let option = arguments.given.first(where: addOnly.contains) {
            throw CommandFailure(code: .usage, message: "--\(option) is for oidc clients add")
        }
        if action == "add" {
            guard arguments.options["name"] != nil else { throw CommandFailure(code: .usage, message: "oidc clients add needs --name NAME") }
            guard arguments.optionValues["redirect-uri"] != nil else {
                throw CommandFailure(code: .usage, message: "oidc clients add needs at least one --redirect-uri URI")
            }
            do { _ = try registration.validated() } catch { throw CommandFailure(code: .usage, message: Self.sentence(error, registration)) }
        }
        _ = try arguments.settings()
    }

    /// A registration error in the options' words: `--redirect-uri "http://a.example/cb": http only …`.
    static func sentence(_ error: OIDCClientRegistrationError, _ registration: OIDCClientRegistration) -> String {
        let (option, values): (String, [String]) = switch error.field {
        case .name: ("--name", [])
        case .redirectURIs: ("--redirect-uri", registration.redirectURIs)
        case .postLogoutRedirectURIs: ("--post-logout-redirect-uri", registration.postLogoutRedirectURIs)
        case .scopes: ("--scope", registration.scopes ?? [])
        case .allowNoPKCE: ("--allow-no-pkce", [])
        case .idTokenSignedResponseAlg: ("--id-token-alg", [])
        }
        let value = error.index.flatMap { values.indices.contains($0) ? " \(values[$0].debugDescription)" : nil } ?? ""
        return "\(option)\(value): \(error.reason)"
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let clients = flows.service.oidcClients
        let json = arguments.switches.contains("json")
        switch arguments.words[2] {
        case "add":
            let registration = self.registration
            let added = try flow { () throws(AuthError) in
                try clients.add(
                    name: registration.name, redirectURIs: registration.redirectURIs, public: registration.isPublic,
                    firstParty: registration.firstParty, postLogoutRedirectURIs: registration.postLogoutRedirectURIs,
                    allowNoPKCE: registration.allowNoPKCE, scopes: registration.scopes,
                    idTokenSignedResponseAlg: registration.idTokenSignedResponseAlg)
            }
            print(Self.describe(added, json: json))
        case "list":
            print(Self.describe(try flow { () throws(AuthError) in try clients.list() }, json: json))
        case "remove":
            let id = arguments.words[3]
            guard try flow({ () throws(AuthError) in try clients.remove(id: id) }) else {
                throw CommandFailure(code: .badInput, message: "no OpenID Connect client \(id.debugDescription)")
            }
            print("removed \(id)")
        default:
            let id = arguments.words[3]
            guard let rotated = try flow({ () throws(AuthError) in try clients.rotateSecret(id: id) }) else {
                throw CommandFailure(code: .badInput, message: "no OpenID Connect client \(id.debugDescription)")
            }
            print(Self.describe(rotated, json: json))
        }
        return ExitCode.success.rawValue
    }

    /// What `add` and `rotate-secret` print: the client, and its secret this once.
    static func describe(_ credentials: OIDCClientCredentials, json: Bool) -> String {
        if json { return String(decoding: APIJSON.encode(OIDCClientSecretBody(credentials)), as: UTF8.self) }
        var lines = [line(credentials.client)]
        if let secret = credentials.secret {
            lines.append("client_secret: \(secret)")
            lines.append("(shown this once: the database keeps only its SHA-256; give it to the relying party now)")
        } else {
            lines.append("a public client: no secret, PKCE alone")
        }
        return lines.joined(separator: "\n")
    }

    /// What `list` prints.
    static func describe(_ clients: [OIDCClient], json: Bool) -> String {
        if json { return String(decoding: APIJSON.encode(OIDCClientListBody(clients: clients.map(OIDCClientBody.init))), as: UTF8.self) }
        return clients.isEmpty ? "no OpenID Connect clients" : clients.map(line).joined(separator: "\n")
    }

    /// One client on one line (tab-separated), never a secret.
    static func line(_ client: OIDCClient) -> String {
        var traits = [client.isPublic ? "public" : "confidential"]
        if client.firstParty { traits.append("first-party") }
        if client.allowNoPKCE { traits.append("no-pkce-allowed") }
        if client.idTokenSignedResponseAlg != .es256 { traits.append(client.idTokenSignedResponseAlg.rawValue) }
        return [
            "client_id: \(client.clientID)", client.name, traits.joined(separator: ","), "scopes=\(client.scopes.joined(separator: " "))",
            "redirect=\(client.redirectURIs.joined(separator: " "))",
        ].joined(separator: "\t")
            + (client.postLogoutRedirectURIs.isEmpty ? "" : "\tpost-logout=\(client.postLogoutRedirectURIs.joined(separator: " "))")
            + "\tcreated \(isoDate(client.createdAt))"
    }
}
