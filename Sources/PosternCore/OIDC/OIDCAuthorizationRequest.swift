/// An authorization request (OpenID Connect Core 1.0 §3.1.2.1) that passed every check of
/// ``validate(_:clients:)``: what the hosted page signs in for and the code is then bound to.
public struct OIDCAuthorizationRequest: Sendable, Hashable {
    /// What `prompt` asks for.
    public enum Prompt: String, Sendable, Hashable, CaseIterable {
        /// No page at all: a code from the browser session, or `login_required`/`consent_required`.
        case none
        /// A fresh sign-in even with a browser session.
        case login
        /// The consent screen even for a client consented to before.
        case consent
    }

    /// The client, as registered.
    public let client: OIDCClient
    /// One of the client's redirect URIs, as the request gave it (a loopback one with its port).
    public let redirectURI: String
    /// The scopes asked for (each allowed to the client, `openid` among them), without repeats.
    public let scopes: [String]
    /// Echoed in the response.
    public let state: String?
    /// Goes into the ID token.
    public let nonce: String?
    /// The PKCE S256 challenge; nil only for a client registered with `allowNoPkce`.
    public let codeChallenge: String?
    /// What `prompt` asked for.
    public let prompt: Set<Prompt>
    /// The longest time since the person's last sign-in the client accepts, in seconds.
    public let maxAge: Int64?
    /// Prefills the address field.
    public let loginHint: String?
    /// The client's preferred languages, in order.
    public let uiLocales: [String]
    /// An ID token the client was given before, naming who it expects (checked by the flow).
    public let idTokenHint: String?

    /// What checking a request decided.
    public enum Outcome: Sendable, Hashable {
        /// Every check passed.
        case valid(OIDCAuthorizationRequest)
        /// The client or its redirect URI cannot be trusted: Postern shows `reason` on its own page
        /// and never redirects (RFC 6749 §4.1.2.1; an open redirector otherwise).
        case refusedOnPage(reason: String)
        /// Redirect back to `redirectURI` with `error` (RFC 6749 §4.1.2.1, OpenID Connect Core
        /// §3.1.2.6), `description`, `state` when the request had one, and `iss` (RFC 9207).
        case refusedToClient(redirectURI: String, error: String, description: String, state: String?)
    }

    /// The longest `state`, `nonce` or `login_hint` taken (they travel in URLs and pages).
    static let maximumValueLength = 2_048

    /// Checks a request's parameters, as given in the query or form (each name once: a repeated
    /// parameter is refused, RFC 6749 §3.1), against the registered clients (`client` looks one up
    /// by id). The client and the redirect URI are checked first and refused on Postern's page;
    /// everything after is refused to the client's redirect URI.
    public static func validate(_ parameters: [(name: String, value: String)], client lookUp: (String) -> OIDCClient?) -> Outcome {
        var values: [String: String] = [:]
        var repeated: Set<String> = []
        for (name, value) in parameters {
            if values[name] != nil { repeated.insert(name) }
            values[name] = value
        }
        guard !repeated.contains("client_id"), let clientID = values["client_id"], !clientID.isEmpty else {
            return .refusedOnPage(reason: "The request names no client (client_id), or names it twice.")
        }
        guard let client = lookUp(clientID) else {
            return .refusedOnPage(reason: "The application that sent you here is not registered with this sign-in service.")
        }
        guard !repeated.contains("redirect_uri"), let redirectURI = values["redirect_uri"], client.redirectURIMatches(redirectURI) else {
            return .refusedOnPage(reason: "The application asked to send you back to an address it has not registered (redirect_uri).")
        }
        let state = repeated.contains("state") ? nil : values["state"]
        func refuse(_ error: String, _ description: String) -> Outcome {
            .refusedToClient(redirectURI: redirectURI, error: error, description: description, state: state)
        }
        if let name = repeated.sorted().first { return refuse("invalid_request", "\(name) is given more than once") }
        if values["request"] != nil { return refuse("request_not_supported", "request objects are not supported") }
        if values["request_uri"] != nil { return refuse("request_uri_not_supported", "request_uri is not supported") }
        guard let responseType = values["response_type"] else { return refuse("invalid_request", "response_type is missing") }
        guard responseType == "code" else { return refuse("unsupported_response_type", "only response_type=code is supported") }
        if let mode = values["response_mode"], mode != "query" { return refuse("invalid_request", "only response_mode=query is supported") }
        for name in ["state", "nonce", "login_hint"] where (values[name]?.utf8.count ?? 0) > maximumValueLength {
            return refuse("invalid_request", "\(name) is longer than \(maximumValueLength) bytes")
        }

        var scopes: [String] = []
        for scope in (values["scope"] ?? "").split(separator: " ").map(String.init) where !scopes.contains(scope) { scopes.append(scope) }
        guard scopes.contains("openid") else { return refuse("invalid_scope", "scope must include openid") }
        if let refused = scopes.first(where: { !client.scopes.contains($0) }) {
            return refuse("invalid_scope", "scope \(refused) is not allowed to this client")
        }

        let nonce = values["nonce"].flatMap { $0.isEmpty ? nil : $0 }
        let challenge = values["code_challenge"].flatMap { $0.isEmpty ? nil : $0 }
        let method = values["code_challenge_method"]
        if let method, method != "S256" { return refuse("invalid_request", "code_challenge_method must be S256") }
        if let challenge {
            // RFC 7636 §4.3: a challenge without a method means plain, which is refused.
            guard method == "S256" else { return refuse("invalid_request", "code_challenge_method must be S256") }
            // The shape the API's own codeChallenge has (FlowContext.checkChallenge).
            guard (try? FlowContext.checkChallenge(challenge)) != nil else {
                return refuse("invalid_request", "code_challenge must be base64url(SHA-256(code_verifier)): 43 characters")
            }
        } else {
            guard client.allowNoPKCE else { return refuse("invalid_request", "code_challenge (PKCE, S256) is required") }
            guard nonce != nil else { return refuse("invalid_request", "nonce is required of a client without PKCE") }
        }

        var prompt: Set<Prompt> = []
        for word in (values["prompt"] ?? "").split(separator: " ") {
            guard let value = Prompt(rawValue: String(word)) else { return refuse("invalid_request", "prompt \(word) is not supported") }
            prompt.insert(value)
        }
        if prompt.contains(.none) && prompt.count > 1 { return refuse("invalid_request", "prompt=none cannot be combined with another value") }

        var maxAge: Int64?
        if let text = values["max_age"] {
            guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let seconds = Int64(text)
            else { return refuse("invalid_request", "max_age must be a whole number of seconds") }
            maxAge = seconds
        }

        return .valid(
            OIDCAuthorizationRequest(
                client: client, redirectURI: redirectURI, scopes: scopes, state: state, nonce: nonce, codeChallenge: challenge,
                prompt: prompt, maxAge: maxAge, loginHint: values["login_hint"].flatMap { $0.isEmpty ? nil : $0 },
                uiLocales: (values["ui_locales"] ?? "").split(separator: " ").map(String.init),
                idTokenHint: values["id_token_hint"].flatMap { $0.isEmpty ? nil : $0 }))
    }
}
