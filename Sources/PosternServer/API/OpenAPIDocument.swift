import PosternCore

/// `/openapi.json`: the contract as OpenAPI 3, generated from the router's own table, so the two
/// cannot drift apart (a test checks both ways over HTTP).
enum OpenAPIDocument {
    static let path = "/openapi.json"

    /// Stands in for the document's own route while the document is rendered.
    static let placeholderRoute = Route(
        method: "GET", path: path, summary: "This contract as OpenAPI 3", access: .operations, status: 200
    ) { _ throws(AuthError) in HTTPResponse(status: 500) }

    static func route(serving document: String) -> Route {
        Route(method: "GET", path: path, summary: placeholderRoute.summary, access: .operations, status: 200) { _ throws(AuthError) in
            .json(200, document)
        }
    }

    static func render(_ routes: [Route]) -> String {
        var paths: [String: [String: Any]] = [:]
        for route in routes {
            var operation: [String: Any] = [
                "summary": route.summary,
                "operationId": route.method.lowercased() + route.path.split(separator: "/").map { $0.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "").capitalized }.joined().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ".", with: ""),
                "responses": [
                    String(route.status): ["description": "Success"],
                    "default": ["description": "An error", "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]]],
                ],
            ]
            let parameters = route.path.split(separator: "/").filter { $0.hasPrefix("{") }.map {
                ["name": String($0.dropFirst().dropLast()), "in": "path", "required": true, "schema": ["type": "string"]] as [String: Any]
            }
            if !parameters.isEmpty { operation["parameters"] = parameters }
            switch route.access {
            case .user: operation["security"] = [["idToken": [String]()]]
            case .admin: operation["security"] = [["adminToken": [String]()]]
            default: break
            }
            if ["POST", "PATCH"].contains(route.method), route.path.hasPrefix("/v1/") {
                operation["requestBody"] = ["content": ["application/json": ["schema": ["type": "object"]]]]
            }
            paths[route.path, default: [:]][route.method.lowercased()] = operation
        }
        let document: [String: Any] = [
            "openapi": "3.0.3",
            "info": ["title": "Postern", "version": "1", "description": "Email sign-in links, codes and password resets."],
            "paths": paths,
            "components": [
                "securitySchemes": [
                    "idToken": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"],
                    "adminToken": ["type": "http", "scheme": "bearer"],
                ],
                "schemas": [
                    "Error": [
                        "type": "object",
                        "properties": ["error": ["type": "object", "properties": ["code": ["type": "string"], "message": ["type": "string"]]]],
                    ]
                ],
            ],
        ]
        return JSONAnswer.encode(document)
    }
}
