/// The answer of `GET /v1/challenge`: what a request that sends mail or SMS must solve when the
/// service answers `CHALLENGE_REQUIRED`. For the built-in proof of work (`kind` "altcha") it is
/// ALTCHA's challenge JSON, usable as the ALTCHA widget's `challengeurl` answer; for a CAPTCHA
/// the service and its site key.
public struct ChallengeBody: Sendable, Hashable, Codable {
    /// "altcha", or the CAPTCHA service: "turnstile", "hcaptcha", "recaptcha".
    public var kind: String
    /// Proof of work: "SHA-256".
    public var algorithm: String?
    /// Proof of work: the hex SHA-256 of `salt` followed by the number to find.
    public var challenge: String?
    /// Proof of work: the largest number to try.
    public var maxnumber: Int64?
    /// Proof of work: the salt, with its expiry (`?expires=<unix seconds>&`).
    public var salt: String?
    /// Proof of work: the server's signature of `challenge`.
    public var signature: String?
    /// CAPTCHA: the site's public key for the service's widget.
    public var siteKey: String?

    public init(
        kind: String, algorithm: String? = nil, challenge: String? = nil, maxnumber: Int64? = nil, salt: String? = nil,
        signature: String? = nil, siteKey: String? = nil
    ) {
        self.kind = kind
        self.algorithm = algorithm
        self.challenge = challenge
        self.maxnumber = maxnumber
        self.salt = salt
        self.signature = signature
        self.siteKey = siteKey
    }
}

extension ChallengeBody: DocumentedBody {
    public static let schemaName = "Challenge"
    public static var schema: JSONSchema {
        var schema = JSONSchema.object(
            "What to solve before a request that sends mail or SMS (after CHALLENGE_REQUIRED). The proof of work (kind altcha) is ALTCHA's classic challenge: find number in 0…maxnumber with SHA-256(salt + number) = challenge, then send base64 of {algorithm, challenge, number, salt, signature} as challengeSolution (the ALTCHA widget does it as it is). A CAPTCHA: show the service's widget with siteKey and send its token.", [
            .required("kind", .oneOf(["altcha", "turnstile", "hcaptcha", "recaptcha"])),
            .optional("algorithm", .oneOf(["SHA-256"])),
            .optional("challenge", .string("Hex SHA-256.", pattern: "^[0-9a-f]{64}$")),
            .optional("maxnumber", .integer("The largest number to try.", minimum: 1, maximum: 100_000_000)),
            .optional("salt", .string("24 hex digits, then ?expires=<unix seconds>&.", pattern: "^[0-9a-f]{24}\\?expires=[0-9]+&$")),
            .optional("signature", .string("Hex HMAC-SHA-256 of challenge.", pattern: "^[0-9a-f]{64}$")),
            .optional("siteKey", .string("The CAPTCHA's public site key.")),
        ])
        schema.anyOf = [
            .object([.required("algorithm", .oneOf(["SHA-256"])), .required("challenge", .string()), .required("maxnumber", .integer()),
                     .required("salt", .string()), .required("signature", .string())]),
            .object([.required("siteKey", .string())]),
        ]
        return schema
    }
    public static var example: Self {
        Self(kind: "altcha", algorithm: "SHA-256", challenge: String(repeating: "ab", count: 32), maxnumber: 250_000,
             salt: "0123456789abcdef01234567?expires=1767225600&", signature: String(repeating: "cd", count: 32),
             siteKey: "0x4AAAAAAA-example-site-key")
    }
}
