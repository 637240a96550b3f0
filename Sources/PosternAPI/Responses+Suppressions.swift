/// A suppressed address as operators see it: `GET /v1/admin/suppressions`,
/// `postern suppressions list --json`.
public struct SuppressionBody: Sendable, Hashable, Codable {
    /// The address as the list keys it (its local part lower-cased, its domain in IDNA form).
    public var email: String
    /// `bounce`, `complaint` or `rejected` (``reasons``).
    public var reason: String
    public var suppressedAt: String
    /// What suppressed it, as it was recorded: the report's status (`5.1.1`), or the provider and
    /// its event (`amazon-ses Permanent/General 5.1.1`, `postmark HardBounce`).
    public var detail: String

    /// The body of one suppression.
    public init(email: String, reason: String, suppressedAt: String, detail: String = "") {
        self.detail = detail
        self.email = email
        self.reason = reason
        self.suppressedAt = suppressedAt
    }

    /// The reasons, as Core's `SuppressionReason` names them: a delivery report's permanent
    /// failure, an abuse report, a permanent (5xx) refusal at delivery.
    public static let reasons = ["bounce", "complaint", "rejected"]
}

/// The answer of `GET /v1/admin/suppressions`: the one suppression of `?email=` (or none), or a
/// page of them newest first.
public struct SuppressionListBody: Sendable, Hashable, Codable {
    public var suppressions: [SuppressionBody]
    /// The `cursor` of the next page; absent on the last page and for `?email=`.
    public var nextCursor: String?

    /// A page of `suppressions`, and the cursor of the next (nil on the last).
    public init(suppressions: [SuppressionBody], nextCursor: String?) {
        self.suppressions = suppressions
        self.nextCursor = nextCursor
    }
}

extension SuppressionBody: DocumentedBody {
    public static let schemaName = "Suppression"
    public static var schema: JSONSchema {
        .object("An address no mail is sent to, and why.", [
            .required("email", .emailAddress),
            .required("reason", .oneOf(reasons, "`bounce`: a delivery report said the mail failed for good; `complaint`: an abuse report (only an operator lifts it); `rejected`: the relay refused the mail with a 5xx reply.")),
            .required("suppressedAt", .timestamp),
            .required("detail", .string("What suppressed it: the report's status (5.1.1), or the provider and its event (amazon-ses Permanent/General 5.1.1, postmark HardBounce); empty when nothing was said.")),
        ])
    }
    public static var example: Self {
        Self(email: JSONSchema.Example.email, reason: "bounce", suppressedAt: JSONSchema.Example.timestamp, detail: "amazon-ses Permanent/General 5.1.1")
    }
}

extension SuppressionListBody: DocumentedBody {
    public static let schemaName = "SuppressionList"
    public static var schema: JSONSchema {
        .object("Suppressions, newest first.", [
            .required("suppressions", .array(.body(SuppressionBody.self))),
            .optional("nextCursor", .string("Pass as `cursor` for the next page; absent on the last.")),
        ])
    }
    public static var example: Self { Self(suppressions: [.example], nextCursor: "MTczODMyNDgwMCBhbm5AZXhhbXBsZS5jb20") }
    public static var referencedBodies: [any DocumentedBody.Type] { [SuppressionBody.self] }
}

/// The answer of the providers' delivery-event intakes (`POST /v1/delivery-events/ses`,
/// `/postmark`, `/standard-webhooks`): the same shape for all three.
public struct DeliveryEventResultBody: Sendable, Hashable, Codable {
    /// Recipients suppressed (a permanent bounce, a complaint).
    public var suppressed: Int
    /// Events or recipients ignored (a soft bounce, a delivery, an address that does not parse).
    public var ignored: Int

    /// The body of what was done.
    public init(suppressed: Int, ignored: Int) {
        self.suppressed = suppressed
        self.ignored = ignored
    }
}

extension DeliveryEventResultBody: DocumentedBody {
    public static let schemaName = "DeliveryEventResult"
    public static var schema: JSONSchema {
        .object("What a provider's delivery event came to.", [
            .required("suppressed", .integer("Recipients added to the suppression list (bounce or complaint).", minimum: 0)),
            .required("ignored", .integer("Events or recipients that suppress nothing (a soft bounce, a delivery, a confirmation's nothing).", minimum: 0)),
        ])
    }
    public static var example: Self { Self(suppressed: 1, ignored: 0) }
}
