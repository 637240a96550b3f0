/// A page of `GET /v1/admin/users`: users newest first, and the cursor of the next page.
public struct UserListBody: Sendable, Hashable, Codable {
    public var users: [UserBody]
    /// The `cursor` of the next page; null on the last.
    public var nextCursor: String?

    /// A page of `users`, and the cursor of the next (nil on the last).
    public init(users: [UserBody], nextCursor: String?) {
        self.users = users
        self.nextCursor = nextCursor
    }

    private enum CodingKeys: String, CodingKey { case users, nextCursor }

    /// Writes `nextCursor` as null on the last page (not absent), as the route promises.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(users, forKey: .users)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// The answer of `GET /v1/admin/users`: one user for `?email=` (as the route answered before it
/// listed), else a page of the list.
public enum UserLookupBody: Sendable, Hashable, Codable {
    case user(UserBody)
    case page(UserListBody)

    /// Reads a page when the object has `users`, else one user.
    public init(from decoder: any Decoder) throws {
        if let page = try? UserListBody(from: decoder) {
            self = .page(page)
        } else {
            self = .user(try UserBody(from: decoder))
        }
    }

    /// Writes the user or the page as it is (no wrapper).
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .user(let user): try user.encode(to: encoder)
        case .page(let page): try page.encode(to: encoder)
        }
    }
}

extension UserListBody: DocumentedBody {
    public static let schemaName = "UserList"
    public static var schema: JSONSchema {
        .object("Users, newest first (by creation time, then uid).", [
            .required("users", .array(.body(UserBody.self))),
            .required("nextCursor", .string("Pass as `cursor` for the next page; null on the last.").orNull),
        ])
    }
    public static var example: Self { Self(users: [.example], nextCursor: "MTczODMyNDgwMCB1MQ") }
    public static var referencedBodies: [any DocumentedBody.Type] { [UserBody.self] }
}

extension UserLookupBody: DocumentedBody {
    public static let schemaName = "UserLookup"
    public static var schema: JSONSchema {
        var schema = JSONSchema.anyObject("One user (`email`), or a page of the list.")
        schema.additionalProperties = nil
        schema.anyOf = [.body(UserBody.self), .body(UserListBody.self)]
        return schema
    }
    public static var example: Self { .page(.example) }
    public static var referencedBodies: [any DocumentedBody.Type] { [UserBody.self, UserListBody.self] }
}
