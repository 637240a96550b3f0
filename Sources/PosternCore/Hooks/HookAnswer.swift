import Foundation
import PosternAPI

/// What a hook answered, once read: the only three answers Postern takes. Anything else is a
/// hook failure (``HookAnswer/read(_:status:body:)``).
enum HookAnswer: Sendable, Hashable {
    /// `{"decision":"allow"}`.
    case allow
    /// `{"decision":"deny","message":"…"}`: the message (plain text, capped) is shown to the person.
    case deny(message: String?)
    /// `{"claims":{…}}`: added to the tokens issued.
    case claims([String: JSONValue])

    /// The longest answer body read (a longer one is a failure, not cut).
    static let bodyLimit = 16 * 1024
    /// The most characters of a deny message shown.
    static let messageLimit = 200
    /// The most bytes the claims take as JSON (the tokens grow by that much).
    static let claimsLimit = 2048

    /// The claims a hook may never set: what Postern's tokens and the OpenID Connect tokens say
    /// about who, for whom, when and how; an answer naming one is a failure.
    static let reservedClaims: Set<String> = [
        "iss", "sub", "aud", "exp", "iat", "nbf", "jti", "auth_time", "nonce", "azp", "at_hash", "c_hash", "acr", "amr", "sid",
        "email", "email_verified", "is_anonymous", "sign_in_method", "sv", "scope", "client_id", "cnf",
    ]

    /// Reads the answer of `hook`: a 2xx with a JSON object of the hook's shape.
    /// Returns the failure's short reason (for the log: never the body) when it is not usable.
    static func read(_ hook: HookKind, status: Int, body: [UInt8]) -> Result<HookAnswer, HookFailure> {
        guard (200..<300).contains(status) else { return .failure(HookFailure("HTTP \(status)")) }
        guard body.count <= bodyLimit else { return .failure(HookFailure("the answer is longer than \(bodyLimit / 1024) KiB")) }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(body)), case .object(let object) = value else {
            return .failure(HookFailure("the answer is not a JSON object"))
        }
        switch hook {
        case .beforeSignUp, .beforeSignIn:
            switch object["decision"] {
            case .string("allow"): return .success(.allow)
            case .string("deny"):
                switch object["message"] {
                case nil, .null: return .success(.deny(message: nil))
                case .string(let text): return .success(.deny(message: cleanMessage(text)))
                default: return .failure(HookFailure("message is not a string"))
                }
            default: return .failure(HookFailure("decision is not allow or deny"))
            }
        case .tokenClaims:
            guard case .object(let claims) = object["claims"] else { return .failure(HookFailure("claims is not an object")) }
            if let reserved = claims.keys.sorted().first(where: { reservedClaims.contains($0) }) {
                return .failure(HookFailure("claims names the reserved claim \(reserved)"))
            }
            guard !claims.keys.contains(where: { $0.isEmpty }) else { return .failure(HookFailure("claims has an empty name")) }
            guard JSONValue.object(claims).sortedJSONText.utf8.count <= claimsLimit else {
                return .failure(HookFailure("claims are longer than \(claimsLimit) bytes of JSON"))
            }
            return .success(.claims(claims))
        }
    }

    /// A deny message as a person is shown it: control characters become spaces, runs of
    /// spaces one, at most ``messageLimit`` characters; nil when nothing is left. Plain text:
    /// the pages escape it as every value they show.
    static func cleanMessage(_ text: String) -> String? {
        let spaced = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        let words = spaced.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        guard !words.isEmpty else { return nil }
        return String(words.prefix(messageLimit))
    }
}

/// Why a hook's call came to nothing usable: a short reason for the operator's log (a status,
/// the transport's failure, what the answer's shape lacks), never the body or a secret.
struct HookFailure: Error, Sendable, Hashable {
    let reason: String

    init(_ reason: String) { self.reason = reason }
}
