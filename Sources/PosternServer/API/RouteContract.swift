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
}
