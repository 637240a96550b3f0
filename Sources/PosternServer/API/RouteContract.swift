import PosternAPI

/// What an operation takes and answers, as the OpenAPI document states it: the wire types of
/// PosternAPI (their schemas and examples live with them), the query parameters, and the error
/// codes particular to it. The errors every route of its kind can answer (a malformed body, the
/// IP limit, a missing token, the database down) are added by `OpenAPIDocument`, from the route.
struct RouteContract: Sendable {
    /// What the route reads from the body.
    enum Request: Sendable {
        /// No body.
        case none
        /// A JSON body of this wire type.
        case json(any DocumentedBody.Type)
        /// An HTML form (`application/x-www-form-urlencoded`) with these fields.
        case form(JSONSchema)
        /// Bytes that are not JSON (a raw mail message), sent as one of `mediaTypes` (the first is
        /// the documented one). Only for routes a bearer token guards: a page can send these
        /// types cross-origin without asking, but not with an `Authorization` header.
        case raw(mediaTypes: [String], description: String)
    }

    /// What the route answers on success.
    enum Answer: Sendable {
        /// Not stated: the document gives the status only.
        case unspecified
        /// A JSON body of this wire type.
        case json(any DocumentedBody.Type)
        /// No body (204).
        case noContent
        /// A document of another kind (HTML, text), or JSON that is no wire type (a JWKS).
        case content(mediaType: String, schema: JSONSchema)

        /// The media type of the answer, if any.
        var mediaType: String? {
            switch self {
            case .unspecified, .noContent: nil
            case .json: "application/json"
            case .content(let mediaType, _): mediaType
            }
        }
    }

    /// One query parameter.
    struct Query: Sendable {
        let name: String
        let schema: JSONSchema
        let required: Bool
        let description: String
    }

    /// An OpenAPI link from the success answer to another operation: how a value it answers is
    /// used next (a client generator's "then", schemathesis's stateful phase).
    struct Link: Sendable {
        let name: String
        let method: String
        let path: String
        let description: String
        /// `path.uid`, `query.email` → a runtime expression (`$response.body#/uid`).
        var parameters: [String: String] = [:]
        /// A body with runtime expressions in it.
        var requestBody: JSONValue?
    }

    var request: Request = .none
    var answer: Answer = .unspecified
    /// The codes this route's own work can refuse with (those of its kind are added).
    var errors: [APIErrorCode] = []
    var query: [Query] = []
    /// Schemas of the `{name}` path segments (a string unless given).
    var pathParameters: [String: JSONSchema] = [:]
    /// Statuses the route answers with no error code of the catalogue (the hosted page's 403),
    /// with what they mean; their body is of the answer's kind (a page), or none for JSON routes,
    /// whose errors belong in `errors`.
    var otherStatuses: [Int: String] = [:]
    /// Where the success answer leads.
    var links: [Link] = []
    /// Other successful answers with a JSON body of their own (the approval wait's 202 "pending").
    var otherAnswers: [OtherAnswer] = []

    /// A successful answer besides the route's own status.
    struct OtherAnswer: Sendable {
        let status: Int
        let description: String
        let body: any DocumentedBody.Type
    }
}

extension [RouteContract.Link] {
    /// The refresh token at `pointer` of the answer, exchanged and revoked.
    static func refreshing(from pointer: String) -> Self {
        [
            .init(name: "refresh", method: "POST", path: "/v1/token", description: "Exchange the refresh token.",
                  requestBody: ["refreshToken": .string("$response.body#\(pointer)")]),
            .init(name: "signOut", method: "POST", path: "/v1/sign-out", description: "Revoke the refresh token's family.",
                  requestBody: ["refreshToken": .string("$response.body#\(pointer)")]),
        ]
    }

    /// The user the answer names (its `uid` and `email`), as the admin API sees it.
    static var administeringUser: Self {
        [
            .init(name: "lookUp", method: "GET", path: "/v1/admin/users", description: "Look the user up by address.",
                  parameters: ["query.email": "$response.body#/email"]),
            .init(name: "update", method: "PATCH", path: "/v1/admin/users/{uid}", description: "Change the user.",
                  parameters: ["path.uid": "$response.body#/uid"]),
            .init(name: "delete", method: "DELETE", path: "/v1/admin/users/{uid}", description: "Delete the user.",
                  parameters: ["path.uid": "$response.body#/uid"]),
        ]
    }

    /// A sign-in's answer: its session's refresh token, and its user for the admin API.
    static var signedIn: Self { refreshing(from: "/session/refreshToken") + administeringUser }
}
