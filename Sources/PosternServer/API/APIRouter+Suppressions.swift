import PosternAPI
import PosternCore

extension APIRouter {
    /// The admin API's suppression list (`service.operators`): look an address up or page through
    /// the list, and lift a suppression.
    static func suppressionRoutes(_ runtime: ServerContext) -> [Route] {
        let operators = runtime.service.operators
        let limit = OperatorTools.suppressionPageLimit
        return [
            Route(method: "GET", path: "/v1/admin/suppressions",
                  summary: "Suppressed addresses and why (one address with `email`, else newest first by pages)", access: .admin,
                  status: 200,
                  contract: .init(
                    answer: .json(SuppressionListBody.self), errors: [.invalidArgument, .invalidEmail],
                    query: [
                        .init(name: "email", schema: .emailAddress, required: false,
                              description: "This address's suppression alone (none when it is not suppressed)."),
                        .init(name: "limit", schema: .integer(minimum: 1, maximum: Int64(limit)), required: false,
                              description: "The most to list (default 100, at most \(limit))."),
                        .init(name: "cursor", schema: .string("A `nextCursor` this route answered (opaque: no other is taken).", pattern: "^[A-Za-z0-9_-]+$", minLength: 1), required: false,
                              description: "Continue after the page that answered it."),
                    ],
                    links: [.init(name: "remove", method: "DELETE", path: "/v1/admin/suppressions/{email}",
                                  description: "Lift the suppression.", parameters: ["path.email": "$response.body#/suppressions/0/email"])])
            ) { c throws(AuthError) in
                // limit and cursor are checked even beside email, which answers one address alone.
                let (count, cursor) = try c.page(maximum: limit) { SuppressionCursor(text: $0) }
                if let email = c.request.query["email"] {
                    let found = try operators.suppression(email: email)
                    return .body(200, SuppressionListBody(suppressions: found.map { [SuppressionBody($0)] } ?? [], nextCursor: nil))
                }
                let page = try operators.suppressions(after: cursor, limit: count)
                return .body(200, SuppressionListBody(suppressions: page.suppressions.map(SuppressionBody.init), nextCursor: page.next?.text))
            },
            Route(method: "DELETE", path: "/v1/admin/suppressions/{email}", summary: "Lift an address's suppression: mail to it is sent again",
                  access: .admin, status: 204,
                  contract: .init(answer: .noContent, errors: [.invalidEmail, .notFound],
                                  pathParameters: ["email": .emailAddress])) { c throws(AuthError) in
                guard try operators.removeSuppression(email: c.parameters["email"] ?? "") else { throw AuthError.suppressionNotFound }
                return HTTPResponse(status: 204)
            },
        ]
    }
}

extension SuppressionBody {
    /// The body of `suppression`.
    public init(_ suppression: Suppression) {
        self.init(
            email: suppression.address, reason: suppression.reason.rawValue, suppressedAt: UTCTimestamp.iso8601(suppression.suppressedAt),
            detail: suppression.detail)
    }
}
