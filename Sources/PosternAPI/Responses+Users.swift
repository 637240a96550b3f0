/// A page of `GET /v1/admin/users` (without `email`): users newest first, and the cursor of the
/// next page. Its schema is inline in the route's answer, beside the one User of `email`.
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
