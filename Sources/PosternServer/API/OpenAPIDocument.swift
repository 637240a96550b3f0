import PosternAPI
import PosternCore

/// `/openapi.json`: the contract as OpenAPI 3, generated from the router's own table, so the two
/// cannot drift apart (a test checks both ways over HTTP). Each route's `RouteContract` names the
/// wire types it reads and answers; their schemas and examples come from PosternAPI
/// (`DocumentedBody`), the errors every route of its kind can answer are added here.
enum OpenAPIDocument {
    static let path = "/openapi.json"

    private static let contract = RouteContract(answer: .content(mediaType: "application/json", schema: .anyObject("This document.")))

    /// Stands in for the document's own route while the document is rendered.
    static let placeholderRoute = Route(
        method: "GET", path: path, summary: "This contract as OpenAPI 3", access: .operations, status: 200, contract: contract
    ) { _ throws(AuthError) in HTTPResponse(status: 500) }

    static func route(serving document: String) -> Route {
        Route(method: "GET", path: path, summary: placeholderRoute.summary, access: .operations, status: 200, contract: contract) {
            _ throws(AuthError) in .json(200, document)
        }
    }

    /// What only the running daemon knows, filled into the schemas marked with a
    /// `JSONSchema.Refinement`.
    struct Refinements: Sendable {
        /// The pattern of the continue URLs it allows (nil: the schema stands as written).
        var continueURLPattern: String?
        /// A continue URL it allows, for the examples.
        var continueURLExample: String?
        /// The actions `POST /v1/admin/links` issues.
        var linkActions: [String] = []

        /// The daemon's, from its settings.
        init(settings: Settings) {
            if let policy = try? LinkPolicy(publicURL: settings.publicURL, allowedHosts: settings.effectiveContinueHosts) {
                continueURLPattern = policy.continueURLPattern
                let port = policy.port == (policy.scheme == "http" ? 80 : 443) ? "" : ":\(policy.port)"
                continueURLExample = "\(policy.scheme)://\(policy.host)\(port)/welcome"
            }
            linkActions = OperatorTools.issuableActions
        }

        /// None: every schema as written.
        init() {}

        func apply(_ schema: JSONSchema) -> JSONSchema {
            var schema = schema
            switch schema.refinement {
            case .continueURL?: if let continueURLPattern { schema.pattern = continueURLPattern }
            case .linkAction?: if !linkActions.isEmpty { schema.enumeration = linkActions }
            default: break
            }
            return schema
        }

        /// The example value of a field refined by `refinement`, if the daemon has its own.
        func example(_ refinement: JSONSchema.Refinement?) -> JSONValue? {
            switch refinement {
            case .continueURL?: continueURLExample.map(JSONValue.string)
            default: nil
            }
        }
    }

    static func render(_ routes: [Route], refinements: Refinements = Refinements()) -> String {
        var paths: [String: JSONValue] = [:]
        var bodies: [String: any DocumentedBody.Type] = [ErrorBody.schemaName: ErrorBody.self]
        for route in routes {
            var item = paths[route.path]?.objectValue ?? [:]
            item[route.method.lowercased()] = .object(operation(route, refinements: refinements, bodies: &bodies))
            paths[route.path] = .object(item)
        }
        var schemas: [String: JSONValue] = [:]
        var pending = Array(bodies.values)
        while let body = pending.popLast() {
            guard schemas[body.schemaName] == nil else { continue }
            schemas[body.schemaName] = body.schema.json(refine: refinements.apply)
            pending += body.referencedBodies
        }
        let document: JSONValue = .object([
            "openapi": "3.0.3",
            "info": .object([
                "title": "Postern", "version": "1",
                "description": "Email sign-in links, 6-digit codes and password resets. Every error is {\"error\": {\"code\", \"message\"}} with a code of the catalogue (`ErrorDetail.code`).",
            ]),
            "paths": .object(paths),
            "components": .object([
                "securitySchemes": .object([
                    "idToken": .object([
                        "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                        "description": "The idToken of a Session (ES256, verifiable with /.well-known/jwks.json).",
                    ]),
                    "adminToken": .object([
                        "type": "http", "scheme": "bearer", "description": "The operator's --admin-token (without one the admin API answers 404).",
                    ]),
                ]),
                "schemas": .object(schemas),
            ]),
        ])
        return String(decoding: APIJSON.encode(document), as: UTF8.self)
    }

    /// A stable, readable id: `postV1EmailLinkSend`.
    static func operationID(_ route: Route) -> String { operationID(method: route.method, path: route.path) }

    static func operationID(method: String, path: String) -> String {
        method.lowercased()
            + path.split(separator: "/").map {
                $0.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "").capitalized
            }.joined().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ".", with: "")
    }

    private static func operation(
        _ route: Route, refinements: Refinements, bodies: inout [String: any DocumentedBody.Type]
    ) -> [String: JSONValue] {
        let contract = route.contract
        var operation: [String: JSONValue] = ["summary": .string(route.summary), "operationId": .string(operationID(route))]

        var parameters: [JSONValue] = route.path.split(separator: "/").filter { $0.hasPrefix("{") }.map {
            let name = String($0.dropFirst().dropLast())
            return .object([
                "name": .string(name), "in": "path", "required": true,
                "schema": (contract.pathParameters[name] ?? .string()).json(refine: refinements.apply),
            ])
        }
        parameters += contract.query.map {
            .object([
                "name": .string($0.name), "in": "query", "required": .bool($0.required), "description": .string($0.description),
                "schema": $0.schema.json(refine: refinements.apply),
            ])
        }
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }

        switch route.access {
        case .user: operation["security"] = [["idToken": []]]
        case .admin: operation["security"] = [["adminToken": []]]
        case .public, .operations, .client: break
        }

        switch contract.request {
        case .none:
            break
        case .json(let body):
            bodies[body.schemaName] = body
            operation["requestBody"] = .object([
                // A body whose fields are all optional may be left out: the server reads none as {}.
                "required": .bool(!body.schema.requiredNames.isEmpty || !body.schema.anyOf.isEmpty),
                "content": .object(["application/json": .object([
                    "schema": JSONSchema.body(body).json(), "example": example(body, refinements: refinements),
                ])]),
            ])
        case .form(let schema):
            operation["requestBody"] = .object([
                "required": false,
                "content": .object(["application/x-www-form-urlencoded": .object(["schema": schema.json(refine: refinements.apply)])]),
            ])
        case .raw(let mediaTypes, let description):
            operation["requestBody"] = .object([
                "required": true,
                "description": .string(description),
                "content": .object([
                    // Not blank: an empty or all-whitespace body is the one refusal (INVALID_ARGUMENT).
                    mediaTypes[0]: .object(["schema": .object(["type": "string", "minLength": 1, "pattern": "\\S"])]),
                ]),
            ])
        }

        var responses: [String: JSONValue] = [:]
        var success: [String: JSONValue] = ["description": .string(route.summary)]
        switch contract.answer {
        case .unspecified, .noContent:
            break
        case .json(let body):
            bodies[body.schemaName] = body
            success["content"] = .object(["application/json": .object([
                "schema": JSONSchema.body(body).json(), "example": example(body, refinements: refinements),
            ])])
        case .content(let mediaType, let schema):
            success["content"] = .object([mediaType: .object(["schema": schema.json(refine: refinements.apply)])])
        }
        if !contract.links.isEmpty {
            var links: [String: JSONValue] = [:]
            for link in contract.links {
                var object: [String: JSONValue] = [
                    "operationId": .string(operationID(method: link.method, path: link.path)), "description": .string(link.description),
                ]
                if !link.parameters.isEmpty { object["parameters"] = .object(link.parameters.mapValues(JSONValue.string)) }
                if let body = link.requestBody { object["requestBody"] = body }
                links[link.name] = .object(object)
            }
            success["links"] = .object(links)
        }
        responses[String(route.status)] = .object(success)
        for other in contract.otherAnswers {
            bodies[other.body.schemaName] = other.body
            responses[String(other.status)] = .object([
                "description": .string(other.description),
                "content": .object(["application/json": .object([
                    "schema": JSONSchema.body(other.body).json(), "example": example(other.body, refinements: refinements),
                ])]),
            ])
        }
        for (status, response) in errorResponses(route) { responses[String(status)] = response }
        operation["responses"] = .object(responses)
        return operation
    }

    /// The example of `body` as JSON, with the daemon's own values for refined fields.
    static func example(_ body: any DocumentedBody.Type, refinements: Refinements) -> JSONValue {
        guard case .object(var object) = encodedExample(body) else { return encodedExample(body) }
        for property in body.schema.properties {
            if object[property.name] != nil, let value = refinements.example(property.schema.refinement) { object[property.name] = value }
        }
        return .object(object)
    }

    /// `body`'s example as APIJSON encodes it.
    static func encodedExample(_ body: any DocumentedBody.Type) -> JSONValue {
        func encoded<Body: DocumentedBody>(_ type: Body.Type) -> JSONValue {
            (try? APIJSON.decode(JSONValue.self, from: APIJSON.encode(type.example))) ?? .null
        }
        return encoded(body)
    }

    /// The error codes `route` can answer, by status: its own and those of its kind.
    static func errorCodes(_ route: Route) -> [Int: [APIErrorCode]] {
        var codes = route.contract.errors
        if case .json = route.contract.request { codes.append(.invalidArgument) }
        if route.bodyMediaTypes != nil { codes.append(.unsupportedMediaType) }
        switch route.contract.request {
        case .none: break
        case .json, .form: codes.append(.payloadTooLarge)
        case .raw: codes += [.invalidArgument, .payloadTooLarge]
        }
        if route.access == .public, route.method != "GET", route.method != "HEAD" { codes.append(.tooManyAttempts) }
        switch route.access {
        case .user: codes.append(.invalidIDToken)
        // 429: past the admin token's guess budget of the client's address (AdminTokenBudget).
        case .admin: codes += [.unauthorized, .notFound, .tooManyAttempts]
        case .public, .operations, .client: break
        }
        if route.path.hasPrefix("/v1/") { codes += [.internalFailure, .unavailable] }
        var byStatus: [Int: [APIErrorCode]] = [:]
        for code in codes where !(byStatus[code.httpStatus]?.contains(code) ?? false) {
            byStatus[code.httpStatus, default: []].append(code)
        }
        return byStatus
    }

    private static func errorResponses(_ route: Route) -> [Int: JSONValue] {
        // The hosted page answers its own errors as pages; the HTTP layer's refusals (the IP
        // limit, a body too large) come before it and are JSON.
        let pageErrors: Set<APIErrorCode> = route.contract.answer.mediaType == "text/html" ? Set(route.contract.errors) : []
        var responses: [Int: JSONValue] = [:]
        for (status, codes) in errorCodes(route) {
            var content: [String: JSONValue] = [:]
            if codes.contains(where: { !pageErrors.contains($0) }) {
                content["application/json"] = .object(["schema": JSONSchema.body(ErrorBody.self).json()])
            }
            if codes.contains(where: pageErrors.contains) { content["text/html"] = .object(["schema": ["type": "string"]]) }
            var response: [String: JSONValue] = [
                "description": .string(codes.map(\.rawValue).joined(separator: ", ")), "content": .object(content),
            ]
            if codes.contains(.tooManyAttempts) {
                response["headers"] = .object(["Retry-After": .object([
                    "description": "Seconds to wait before trying again.", "required": true,
                    "schema": .object(["type": "integer", "minimum": 1]),
                ])])
            }
            responses[status] = .object(response)
        }
        for (status, meaning) in route.contract.otherStatuses {
            var response: [String: JSONValue] = ["description": .string(meaning)]
            // A redirect has no body to describe.
            if let mediaType = route.contract.answer.mediaType, mediaType != "application/json", !(300..<400).contains(status) {
                response["content"] = .object([mediaType: .object(["schema": ["type": "string"]])])
            }
            responses[status] = .object(response)
        }
        return responses
    }
}
