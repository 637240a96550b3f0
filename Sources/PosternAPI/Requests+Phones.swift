/// `POST /v1/me/phones`: the signed-in owner asks to add a number.
public struct AddPhoneBody: Sendable, Hashable, Codable {
    /// E.164 (`+4915112345678`; spaces, dashes, dots and parentheses are ignored).
    public var phoneNumber: String
    /// The SMS's language.
    public var locale: String?

    public init(phoneNumber: String, locale: String? = nil) {
        self.phoneNumber = phoneNumber
        self.locale = locale
    }
}

/// `POST /v1/phones/claims`: the number's holder writes a claim for an account, unapproved.
public struct StartPhoneClaimBody: Sendable, Hashable, Codable {
    public var phoneNumber: String
    /// The address of the account the number is to join (answered alike whether or not it has one).
    public var email: String
    public var locale: String?

    public init(phoneNumber: String, email: String, locale: String? = nil) {
        self.phoneNumber = phoneNumber
        self.email = email
        self.locale = locale
    }
}

/// A phone claim's 6-digit SMS code: the proof, and the holder's key to read or delete the claim.
public struct PhoneCodeBody: Sendable, Hashable, Codable {
    public var code: String

    public init(code: String) { self.code = code }
}

/// `POST /v1/phone/send`: a sign-in code by SMS (with `--phone-sign-in`).
public struct PhoneSignInSendBody: Sendable, Hashable, Codable {
    public var phoneNumber: String
    public var locale: String?
    public var idToken: String?
    /// The challenge's solution, when the service asks for one (`CHALLENGE_REQUIRED`): the ALTCHA
    /// payload of a proof of work from `GET /v1/challenge`, or the CAPTCHA widget's token.
    public var challengeSolution: String?

    public init(phoneNumber: String, locale: String? = nil, idToken: String? = nil, challengeSolution: String? = nil) {
        self.challengeSolution = challengeSolution
        self.phoneNumber = phoneNumber
        self.locale = locale
        self.idToken = idToken
    }
}

/// `POST /v1/phone/complete`: the SMS sign-in code, resolved as the email link's six cases.
public struct PhoneSignInCompleteBody: Sendable, Hashable, Codable {
    public var phoneNumber: String
    public var code: String
    public var idToken: String?
    public var allowMigration: Bool?

    public init(phoneNumber: String, code: String, idToken: String? = nil, allowMigration: Bool? = nil) {
        self.phoneNumber = phoneNumber
        self.code = code
        self.idToken = idToken
        self.allowMigration = allowMigration
    }
}

extension PhoneSignInSendBody: DocumentedBody {
    public static let schemaName = "PhoneSignInSendRequest"
    public static var schema: JSONSchema {
        .object("A sign-in code by SMS (only with --phone-sign-in).", [
            .required("phoneNumber", .phoneNumberInput),
            .optional("locale", .locale),
            .optional("idToken", .idToken),
            .optional("challengeSolution", .challengeSolution),
        ])
    }
    public static var example: Self {
        Self(phoneNumber: "+4915112345678", locale: "en", idToken: "eyJhbGciOiJFUzI1NiJ9.e30.sig",
             challengeSolution: JSONSchema.Example.challengeSolution)
    }
}

extension PhoneSignInCompleteBody: DocumentedBody {
    public static let schemaName = "PhoneSignInCompleteRequest"
    public static var schema: JSONSchema {
        .object("The SMS sign-in code (only with --phone-sign-in).", [
            .required("phoneNumber", .phoneNumberInput),
            .required("code", .string("The 6 digits from the SMS.", pattern: "^[0-9]{6}$", minLength: 6, maxLength: 6)),
            .optional("idToken", .idToken),
            .optional("allowMigration", .boolean("As for the email link: the answer to MIGRATION_REQUIRED.")),
        ])
    }
    public static var example: Self { Self(phoneNumber: "+4915112345678", code: "123456", idToken: "eyJhbGciOiJFUzI1NiJ9.e30.sig", allowMigration: true) }
}

extension AddPhoneBody: DocumentedBody {
    public static let schemaName = "AddPhoneRequest"
    public static var schema: JSONSchema {
        .object("An SMS with a 6-digit code goes to the number; the answer is the same for every number.", [
            .required("phoneNumber", .phoneNumberInput),
            .optional("locale", .locale),
        ])
    }
    public static var example: Self { Self(phoneNumber: "+49 151 1234 5678", locale: "de") }
}

extension StartPhoneClaimBody: DocumentedBody {
    public static let schemaName = "StartPhoneClaimRequest"
    public static var schema: JSONSchema {
        .object("The number's holder asks for the number to join the account of `email`; its owner approves later. The same answer for every number and address.", [
            .required("phoneNumber", .phoneNumberInput),
            .required("email", .emailAddress),
            .optional("locale", .locale),
        ])
    }
    public static var example: Self { Self(phoneNumber: "+4915112345678", email: JSONSchema.Example.email, locale: "en") }
}

extension PhoneCodeBody: DocumentedBody {
    public static let schemaName = "PhoneCodeRequest"
    public static var schema: JSONSchema {
        .object([.required("code", .string("The 6 digits from the SMS.", pattern: "^[0-9]{6}$", minLength: 6, maxLength: 6))])
    }
    public static var example: Self { Self(code: "123456") }
}

extension JSONSchema {
    /// A phone number as a caller types it.
    public static let phoneNumberInput = JSONSchema.string(
        "E.164: `+`, the country code and at most 15 digits; spaces, dashes, dots and parentheses are ignored (national numbers only with --default-region).",
        minLength: 1, maxLength: 64)
    /// A phone claim's id.
    public static let phoneClaimID = JSONSchema.string("A phone claim's id (base64url, 22 characters).", pattern: "^[A-Za-z0-9_-]{22}$")
}
