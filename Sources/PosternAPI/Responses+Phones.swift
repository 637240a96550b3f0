/// A phone claim as one of its parties sees it: never the number (only `+49…`), never the code.
public struct PhoneClaimBody: Sendable, Hashable, Codable {
    public var claimId: String
    /// The redacted number: `+` and the country calling code.
    public var phoneNumber: String
    /// `awaiting_code`, `awaiting_approval`, `awaiting_transfer`, `verified` or `expired`.
    public var status: String
    public var ownerApproved: Bool
    public var holderProved: Bool
    public var createdAt: String
    public var expiresAt: String?
    public var verifiedAt: String?
    public var transferDueAt: String?
    public var releaseRequestedUntil: String?
    /// The number moves only on its holder's release, never by cool-off (it is the holding
    /// account's only way in).
    public var awaitingRelease: Bool

    public init(
        claimId: String, phoneNumber: String, status: String, ownerApproved: Bool, holderProved: Bool, createdAt: String,
        expiresAt: String?, verifiedAt: String?, transferDueAt: String?, releaseRequestedUntil: String?, awaitingRelease: Bool = false
    ) {
        self.claimId = claimId
        self.phoneNumber = phoneNumber
        self.status = status
        self.ownerApproved = ownerApproved
        self.holderProved = holderProved
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.verifiedAt = verifiedAt
        self.transferDueAt = transferDueAt
        self.releaseRequestedUntil = releaseRequestedUntil
        self.awaitingRelease = awaitingRelease
    }

    private enum CodingKeys: String, CodingKey {
        case claimId, phoneNumber, status, ownerApproved, holderProved, createdAt, expiresAt, verifiedAt, transferDueAt,
            releaseRequestedUntil, awaitingRelease
    }

    /// Decodes a claim; `awaitingRelease` is false when a server from before it left it out.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            claimId: try c.decode(String.self, forKey: .claimId), phoneNumber: try c.decode(String.self, forKey: .phoneNumber),
            status: try c.decode(String.self, forKey: .status), ownerApproved: try c.decode(Bool.self, forKey: .ownerApproved),
            holderProved: try c.decode(Bool.self, forKey: .holderProved), createdAt: try c.decode(String.self, forKey: .createdAt),
            expiresAt: try c.decodeIfPresent(String.self, forKey: .expiresAt),
            verifiedAt: try c.decodeIfPresent(String.self, forKey: .verifiedAt),
            transferDueAt: try c.decodeIfPresent(String.self, forKey: .transferDueAt),
            releaseRequestedUntil: try c.decodeIfPresent(String.self, forKey: .releaseRequestedUntil),
            awaitingRelease: try c.decodeIfPresent(Bool.self, forKey: .awaitingRelease) ?? false)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(claimId, forKey: .claimId)
        try c.encode(phoneNumber, forKey: .phoneNumber)
        try c.encode(status, forKey: .status)
        try c.encode(ownerApproved, forKey: .ownerApproved)
        try c.encode(holderProved, forKey: .holderProved)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(expiresAt, forKey: .expiresAt)
        try c.encode(verifiedAt, forKey: .verifiedAt)
        try c.encode(transferDueAt, forKey: .transferDueAt)
        try c.encode(releaseRequestedUntil, forKey: .releaseRequestedUntil)
        try c.encode(awaitingRelease, forKey: .awaitingRelease)
    }

    /// Every status, as `status` names them.
    public static let statuses = ["awaiting_code", "awaiting_approval", "awaiting_transfer", "verified", "expired"]
}

/// `GET /v1/me/phones`.
public struct PhoneClaimListBody: Sendable, Hashable, Codable {
    public var claims: [PhoneClaimBody]

    public init(claims: [PhoneClaimBody]) { self.claims = claims }
}

/// The answer to a claim's request or proof: the same whether the number is free or held by
/// another account.
public struct PhoneClaimAcceptedBody: Sendable, Hashable, Codable {
    public var claimId: String
    /// `sms_sent` (a claim was recorded and its SMS queued) or `proved` (the code proved the number).
    public var status: String

    public init(claimId: String, status: String) {
        self.claimId = claimId
        self.status = status
    }
}

extension PhoneClaimBody: DocumentedBody {
    public static let schemaName = "PhoneClaim"
    public static var schema: JSONSchema {
        .object("A claim that a phone number belongs to an account, as its parties see it (the number only as `+49…`).", [
            .required("claimId", .phoneClaimID),
            .required("phoneNumber", .string("The redacted number: `+` and the country calling code, then `…`; in the account's own list, while the claim is unsettled, also the last two digits (`+49…78`), so its owner can tell a number someone else claimed for the account from their own.")),
            .required("status", .oneOf(PhoneClaimBody.statuses,
                "awaiting_code: the holder has not typed the code; awaiting_approval: the holder proved it first, the owner has not approved; awaiting_transfer: both agreed, another account holds the number until it releases it or transferDueAt; verified: the number is the account's; expired.")),
            .required("ownerApproved", .boolean("The account's owner agreed.")),
            .required("holderProved", .boolean("The number's holder proved it with the code.")),
            .required("createdAt", .timestamp),
            .optional("expiresAt", .timestamp.described("Until when the unfinished claim lives.")),
            .optional("verifiedAt", .timestamp),
            .optional("transferDueAt", .timestamp.described("awaiting_transfer: when the number moves here unless its holder objects (null when it moves only on the holder's release: awaitingRelease).")),
            .optional("releaseRequestedUntil", .timestamp.described("verified: another account asked for this number; it moves then unless released sooner or objected to.")),
            .optional("awaitingRelease", .boolean("The number is the holding account's only way in (no address, no password, no other number): it moves only when that account releases it, never by cool-off. awaiting_transfer: this claim waits for that release; verified: another account asks this one to release it.")),
        ])
    }
    public static var example: Self {
        Self(claimId: "AAGUsJ3kR2mHq8l1pX4b9w", phoneNumber: "+49…", status: "verified", ownerApproved: true, holderProved: true,
             createdAt: JSONSchema.Example.timestamp, expiresAt: JSONSchema.Example.timestamp, verifiedAt: JSONSchema.Example.timestamp,
             transferDueAt: JSONSchema.Example.timestamp, releaseRequestedUntil: JSONSchema.Example.timestamp)
    }
}

extension PhoneClaimListBody: DocumentedBody {
    public static let schemaName = "PhoneClaimList"
    public static var schema: JSONSchema {
        .object("The account's phone claims, oldest first.", [.required("claims", .array(.body(PhoneClaimBody.self)))])
    }
    public static var example: Self { Self(claims: [.example]) }
    public static var referencedBodies: [any DocumentedBody.Type] { [PhoneClaimBody.self] }
}

extension PhoneClaimAcceptedBody: DocumentedBody {
    public static let schemaName = "PhoneClaimAccepted"
    public static var schema: JSONSchema {
        .object("The same answer whether the number is free or held by another account.", [
            .required("claimId", .phoneClaimID),
            .required("status", .oneOf(["sms_sent", "proved", "approved"], "sms_sent: the claim is recorded and its SMS queued; proved: the code proved the number; approved: the owner approved it.")),
        ])
    }
    public static var example: Self { Self(claimId: "AAGUsJ3kR2mHq8l1pX4b9w", status: "sms_sent") }
}
