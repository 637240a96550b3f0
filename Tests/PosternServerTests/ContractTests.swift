import Foundation
import PosternAPI
import PosternCore
@testable import PosternServer
import Testing

/// The wire types of PosternAPI — the ones the server encodes and decodes and the Swift client
/// uses — held to `/openapi.json` as the router serves it: every key a type writes is in its
/// operation's schema with that JSON type, and the schema's `required` is exactly what the
/// decoder cannot do without.
@Suite("Contract")
struct ContractTests {
    /// The document the router serves, parsed.
    static func document() throws -> JSONValue {
        let (router, _) = try RouterTests.harness(adminToken: "contract-test-admin-token-0123456789")
        let answer = router.handle(RouterTests.request("GET", "/openapi.json"))
        #expect(answer.status == 200)
        return try APIJSON.decode(JSONValue.self, from: answer.body)
    }

    static func routes() throws -> [Route] {
        try RouterTests.harness(adminToken: "contract-test-admin-token-0123456789").router.routes
    }

    /// A schema with its `$ref` (or nullable `allOf: [$ref]`) followed; nullable says whether
    /// null is allowed on the way.
    static func resolve(_ schema: JSONValue, in document: JSONValue) -> (schema: JSONValue, nullable: Bool) {
        var nullable = schema["nullable"] == .bool(true)
        var current = schema
        while true {
            if let ref = current["$ref"]?.stringValue {
                let name = String(ref.dropFirst("#/components/schemas/".count))
                current = document["components"]?["schemas"]?[name] ?? .null
            } else if let first = current["allOf"]?.arrayValue?.first {
                current = first
            } else {
                break
            }
            nullable = nullable || current["nullable"] == .bool(true)
        }
        return (current, nullable)
    }

    /// Whether `value` has the JSON type `type` names.
    static func hasType(_ value: JSONValue, _ type: String?) -> Bool {
        switch (value, type) {
        case (_, nil): true
        case (.string, "string"), (.bool, "boolean"), (.integer, "integer"), (.integer, "number"), (.number, "number"),
             (.array, "array"), (.object, "object"):
            true
        default: false
        }
    }

    /// What is wrong with `value` against `schema`: every key of an object must be a property with
    /// the matching type (recursively), every required property present, null only where nullable,
    /// strings within their enum, lengths and pattern.
    static func problems(_ value: JSONValue, _ schema: JSONValue, in document: JSONValue, at path: String) -> [String] {
        let (schema, nullable) = resolve(schema, in: document)
        if value == .null { return nullable ? [] : ["\(path) is null, the schema does not allow it"] }
        guard hasType(value, schema["type"]?.stringValue) else {
            return ["\(path) is \(value), the schema says \(schema["type"]?.stringValue ?? "?")"]
        }
        var found: [String] = []
        switch value {
        case .object(let object):
            let properties = schema["properties"]?.objectValue ?? [:]
            if schema["additionalProperties"] != .bool(true) {
                for (key, member) in object {
                    guard let property = properties[key] else {
                        found.append("\(path).\(key) is not in the schema")
                        continue
                    }
                    found += problems(member, property, in: document, at: "\(path).\(key)")
                }
            }
            for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                found.append("\(path).\(name) is required by the schema and missing")
            }
        case .array(let elements):
            if let items = schema["items"] {
                for (index, element) in elements.enumerated() { found += problems(element, items, in: document, at: "\(path)[\(index)]") }
            }
        case .string(let text):
            if let values = schema["enum"]?.arrayValue, !values.contains(value) { found.append("\(path) \(text) is not in the enum") }
            let length = text.unicodeScalars.count
            if case .integer(let most)? = schema["maxLength"], length > most { found.append("\(path) is longer than \(most)") }
            if case .integer(let least)? = schema["minLength"], length < least { found.append("\(path) is shorter than \(least)") }
            if let pattern = schema["pattern"]?.stringValue, !matches(text, pattern) {
                found.append("\(path) \(text) does not match \(pattern)")
            }
        default:
            break
        }
        return found
    }

    /// Whether `pattern` (ECMA-262 as the document writes it; these are also ICU) matches `text`.
    static func matches(_ text: String, _ pattern: String) -> Bool {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return false }
        return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    /// Every null in `value` (a fully populated example has none).
    static func nulls(_ value: JSONValue, at path: String) -> [String] {
        switch value {
        case .null: [path]
        case .object(let object): object.flatMap { nulls($0.value, at: "\(path).\($0.key)") }
        case .array(let elements): elements.enumerated().flatMap { nulls($0.element, at: "\(path)[\($0.offset)]") }
        default: []
        }
    }

    /// The wire types an operation reads and answers, with the schema the document gives each.
    static func operationBodies(_ route: Route, in document: JSONValue) -> [(body: any DocumentedBody.Type, schema: JSONValue?)] {
        let operation = document["paths"]?[route.path]?[route.method.lowercased()]
        var bodies: [(any DocumentedBody.Type, JSONValue?)] = []
        if case .json(let body) = route.contract.request {
            bodies.append((body, operation?["requestBody"]?["content"]?["application/json"]?["schema"]))
        }
        if case .json(let body) = route.contract.answer {
            bodies.append((body, operation?["responses"]?[String(route.status)]?["content"]?["application/json"]?["schema"]))
        }
        for other in route.contract.otherAnswers {
            bodies.append((other.body, operation?["responses"]?[String(other.status)]?["content"]?["application/json"]?["schema"]))
        }
        for (status, _) in OpenAPIDocument.errorCodes(route) {
            let content = operation?["responses"]?[String(status)]?["content"]
            // The hosted page answers its own errors as HTML pages.
            if content?["text/html"] != nil, content?["application/json"] == nil { continue }
            bodies.append((ErrorBody.self, content?["application/json"]?["schema"]))
        }
        return bodies
    }

    /// Whether `Body` decodes from `json`.
    static func decodes(_ body: any DocumentedBody.Type, _ json: JSONValue) -> Bool {
        func attempt<Body: DocumentedBody>(_ type: Body.Type) -> Bool {
            (try? APIJSON.decode(type, from: APIJSON.encode(json))) != nil
        }
        return attempt(body)
    }

    @Test("every operation under /v1 states its request body (when it takes one) and its answer")
    func everyOperationHasSchemas() throws {
        let routes = try Self.routes().filter { $0.path.hasPrefix("/v1/") }
        #expect(routes.count >= 22)
        let document = try Self.document()
        for route in routes {
            let label = "\(route.method) \(route.path)"
            if route.method == "POST" || route.method == "PATCH" || route.method == "PUT" {
                switch route.contract.request {
                case .json, .raw: break
                case .none, .form:
                    Issue.record("\(label) takes a body and states no request schema")
                    continue
                }
            }
            let success = document["paths"]?[route.path]?[route.method.lowercased()]?["responses"]?[String(route.status)]
            switch route.contract.answer {
            case .unspecified: Issue.record("\(label) states no answer")
            case .noContent: #expect(route.status == 204 && success?["content"] == nil, "\(label)")
            case .json, .content: #expect(success?["content"]?["application/json"]?["schema"] != nil, "\(label)")
            }
        }
    }

    @Test("every wire type of an operation, fully populated, holds to that operation's schema in the document")
    func wireTypesHoldToTheDocument() throws {
        let document = try Self.document()
        var checked: Set<String> = []
        for route in try Self.routes() {
            for (body, schema) in Self.operationBodies(route, in: document) {
                let label = "\(route.method) \(route.path) \(body.schemaName)"
                guard let schema else {
                    Issue.record("\(label): no schema in the document")
                    continue
                }
                // Encoded with APIJSON, with the daemon's own continue URL (the document's example).
                let example = OpenAPIDocument.example(body, refinements: .init(settings: Settings()))
                #expect(Self.nulls(example, at: body.schemaName).isEmpty, "\(label): the example leaves fields unset")
                let problems = Self.problems(example, schema, in: document, at: body.schemaName)
                #expect(problems.isEmpty, "\(label): \(problems)")
                // Every property of the schema is written by the fully populated example: no key
                // the document promises that the type cannot send.
                let properties = Self.resolve(schema, in: document).schema["properties"]?.objectValue ?? [:]
                #expect(Set(properties.keys) == Set(example.objectValue?.keys.map { $0 } ?? []), "\(label): schema and type name different keys")
                checked.insert(body.schemaName)
            }
        }
        #expect(checked.isSuperset(of: ["Session", "LoginDescriptor", "User", "ActionInfo", "AppliedAction", "IssuedLink", "OutboxMessageList",
                                        "Accepted", "RetriedMessage", "Error", "EmailLinkSendRequest", "EmailLinkCompleteRequest"]))
    }

    @Test("a schema's required properties are exactly those the decoder cannot do without; the others may be null")
    func requiredMeansNonOptional() throws {
        let document = try Self.document()
        var bodies: [String: any DocumentedBody.Type] = [:]
        for route in try Self.routes() {
            for (body, _) in Self.operationBodies(route, in: document) {
                var pending: [any DocumentedBody.Type] = [body]
                while let next = pending.popLast() {
                    guard bodies[next.schemaName] == nil else { continue }
                    bodies[next.schemaName] = next
                    pending += next.referencedBodies
                }
            }
        }
        #expect(bodies["Session"] != nil && bodies["Migration"] != nil && bodies["ErrorDetail"] != nil && bodies["OutboxMessage"] != nil)
        for (name, body) in bodies {
            let schema = document["components"]?["schemas"]?[name] ?? .null
            let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            guard case .object(let example) = OpenAPIDocument.encodedExample(body) else {
                Issue.record("\(name): the example is not an object")
                continue
            }
            #expect(Self.decodes(body, .object(example)), "\(name): its own example does not decode")
            for key in example.keys {
                var without = example
                without[key] = nil
                var null = example
                null[key] = .null
                if required.contains(key) {
                    #expect(!Self.decodes(body, .object(without)), "\(name).\(key) is required, yet the decoder does without it")
                    #expect(!Self.decodes(body, .object(null)), "\(name).\(key) is required, yet the decoder takes null")
                } else {
                    #expect(Self.decodes(body, .object(without)), "\(name).\(key) is optional, yet the decoder needs it")
                    #expect(Self.decodes(body, .object(null)), "\(name).\(key) is optional, yet the decoder refuses null")
                    let property = Self.resolve(schema["properties"]?[key] ?? .null, in: document)
                    #expect(property.nullable, "\(name).\(key) is optional and not nullable")
                }
            }
        }
    }

    @Test("errors: the code is the catalogue's enum, each status lists its codes, a 429 says Retry-After")
    func errors() throws {
        let document = try Self.document()
        let code = document["components"]?["schemas"]?["ErrorDetail"]?["properties"]?["code"]
        #expect(code?["enum"]?.arrayValue?.compactMap(\.stringValue) == APIErrorCode.allCases.map(\.rawValue))
        var statuses: Set<Int> = []
        for route in try Self.routes() {
            let responses = document["paths"]?[route.path]?[route.method.lowercased()]?["responses"]
            for (status, codes) in OpenAPIDocument.errorCodes(route) {
                statuses.insert(status)
                let response = responses?[String(status)]
                for code in codes { #expect(response?["description"]?.stringValue?.contains(code.rawValue) == true, "\(route.path) \(status)") }
                if status == 429 { #expect(response?["headers"]?["Retry-After"]?["required"] == .bool(true), "\(route.path)") }
            }
        }
        #expect(statuses.isSuperset(of: [400, 401, 404, 409, 413, 415, 429, 500, 503]))
        #expect(document["components"]?["securitySchemes"]?["idToken"]?["bearerFormat"] == "JWT")
        #expect(document["components"]?["securitySchemes"]?["adminToken"]?["scheme"] == "bearer")
    }

    @Test("the JWKS holds to its schema: the ES256 key, then the RS256 key, each matching its own alternative")
    func jwks() throws {
        let document = try Self.document()
        let (router, _) = try RouterTests.harness()
        let answer = router.handle(RouterTests.request("GET", "/.well-known/jwks.json"))
        #expect(answer.status == 200)
        let jwks = try APIJSON.decode(JSONValue.self, from: answer.body)
        let schema = try #require(document["paths"]?["/.well-known/jwks.json"]?["get"]?["responses"]?["200"]?["content"]?["application/json"]?["schema"])
        #expect(Self.problems(jwks, schema, in: document, at: "jwks") == [])
        let keys = try #require(jwks["keys"]?.arrayValue)
        #expect(keys.map { $0["alg"] } == ["ES256", "RS256"])
        let alternatives = try #require(schema["properties"]?["keys"]?["items"]?["anyOf"]?.arrayValue)
        for key in keys {
            let matching = alternatives.filter { alternative in
                let required = alternative["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
                return required.allSatisfy { key[$0] != nil }
                    && required.allSatisfy { name in
                        alternative["properties"]?[name]?["enum"]?.arrayValue.map { $0.contains(key[name] ?? .null) } ?? true
                    }
            }
            #expect(matching.count == 1, "\(key)")
        }
    }

    @Test("a route that states no contract still renders: its summary and success status, no body")
    func bareRoute() throws {
        let route = Route(method: "GET", path: "/.well-known/example", summary: "An example", access: .operations, status: 200) { _ throws(AuthError) in
            HTTPResponse(status: 200)
        }
        let document = try APIJSON.decode(JSONValue.self, from: Array(OpenAPIDocument.render([route]).utf8))
        let operation = document["paths"]?["/.well-known/example"]?["get"]
        #expect(operation?["summary"] == "An example")
        #expect(operation?["responses"]?["200"]?["description"] == "An example")
        #expect(operation?["requestBody"] == nil && operation?["responses"]?["200"]?["content"] == nil)
        #expect(document["components"]?["schemas"]?["Error"] != nil)
    }

    @Test("the continueUrl pattern matches only URLs the daemon allows (and the empty string, which means none)")
    func continueURLPattern() throws {
        var settings = Settings()
        settings.publicURL = "http://127.0.0.1:8080"
        let refinements = OpenAPIDocument.Refinements(settings: settings)
        let pattern = try #require(refinements.continueURLPattern)
        let policy = try LinkPolicy(publicURL: settings.publicURL, allowedHosts: settings.effectiveContinueHosts)
        let candidates = [
            "http://127.0.0.1:8080/welcome", "http://127.0.0.1:8080", "http://127.0.0.1/a/b-c_d~", "https://127.0.0.1:8080/x",
            "http://127.0.0.1:8081/", "http://127.0.0.1.evil.test/", "http://127.0.0.1:8080@evil.test/", "http://evil.test/",
            "http://127.0.0.1:8080/?mode=signIn", "javascript:alert(1)", "//127.0.0.1:8080/", "http://127.0.0.1:8080/%2e%2e",
            "HTTP://127.0.0.1:8080/", "http://127.0.0.1:8080/a b",
        ]
        var matched = 0
        for url in candidates where Self.matches(url, pattern) {
            matched += 1
            #expect(policy.allowedContinueURL(url) != nil, "\(url) matches the pattern and is refused")
        }
        #expect(matched == 4)
        #expect(Self.matches("", pattern))
        #expect(refinements.continueURLExample.map { policy.allowedContinueURL($0) != nil } == true)
    }
}

/// `docs/API.md`, the reference the repository carries, against the document the daemon serves.
@Suite("API reference")
struct APIReferenceTests {
    static func reference() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/API.md"), encoding: .utf8)
    }

    /// Every `` `METHOD /path` `` the page names (a query after `?` dropped).
    static func namedOperations(_ text: String) throws -> Set<String> {
        let expression = try NSRegularExpression(pattern: "`(GET|HEAD|POST|PUT|PATCH|DELETE) (/[^`?\\s]*)")
        var found: Set<String> = []
        for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let method = Range(match.range(at: 1), in: text), let path = Range(match.range(at: 2), in: text) else { continue }
            found.insert("\(text[method]) \(text[path])")
        }
        return found
    }

    @Test("docs/API.md names every operation of /openapi.json, and no other")
    func operations() throws {
        let document = try ContractTests.document()
        var documented: Set<String> = []
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for method in (item.objectValue ?? [:]).keys { documented.insert("\(method.uppercased()) \(path)") }
        }
        #expect(documented.count >= 29)
        let named = try Self.namedOperations(try Self.reference())
        #expect(documented.subtracting(named).sorted() == [], "in /openapi.json, not in docs/API.md")
        #expect(named.subtracting(documented).sorted() == [], "in docs/API.md, not in /openapi.json")
    }

    @Test("docs/API.md lists every error code of the catalogue with its status")
    func errorCodes() throws {
        let text = try Self.reference()
        for code in APIErrorCode.allCases {
            #expect(text.contains("| `\(code.rawValue)` | \(code.httpStatus) |"), "\(code.rawValue)")
        }
    }
}
