/// A JSON Schema as OpenAPI 3.0 writes it: the part of the contract that says what a body holds.
/// The wire types describe themselves with it (`DocumentedBody`), next to their fields, so the
/// document the server serves, the tests that hold the types to it and the client read one
/// description. Only what the contract uses is here.
public struct JSONSchema: Sendable {
    /// The JSON type of a value.
    public enum JSONType: String, Sendable, CaseIterable {
        case object, array, string, integer, number, boolean
    }

    /// One property of an object schema.
    public struct Property: Sendable {
        /// The key.
        public var name: String
        /// What its value is.
        public var schema: JSONSchema
        /// Whether a body without it is refused (decoding) or never sent (encoding).
        public var isRequired: Bool

        /// A property the decoder cannot do without.
        public static func required(_ name: String, _ schema: JSONSchema) -> Property {
            Property(name: name, schema: schema, isRequired: true)
        }

        /// A property that may be absent or null (they mean the same on the wire).
        public static func optional(_ name: String, _ schema: JSONSchema) -> Property {
            Property(name: name, schema: schema.orNull, isRequired: false)
        }
    }

    /// A part of a schema only the running daemon knows (its allowed continue hosts, the actions
    /// it issues): the server fills it in when it renders the document; elsewhere the schema
    /// stands as written.
    public struct Refinement: RawRepresentable, Sendable, Hashable {
        /// Its name.
        public var rawValue: String
        /// The refinement named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A `continueUrl`: the daemon restricts it to the origins it allows.
        public static let continueURL = Refinement(rawValue: "continueUrl")
        /// The `action` of an admin link: the daemon lists the actions it issues.
        public static let linkAction = Refinement(rawValue: "linkAction")
    }

    /// The JSON type; nil for a reference or any value.
    public var type: JSONType?
    /// A component of the document (`#/components/schemas/NAME`) standing for this schema.
    public var reference: String?
    /// What the value means, for a developer.
    public var description: String?
    /// `email`, `date-time`, `int64`, …
    public var format: String?
    /// An ECMA-262 regular expression a string must match.
    public var pattern: String?
    /// Fewest code points of a string.
    public var minLength: Int?
    /// Most code points of a string.
    public var maxLength: Int?
    /// Least value of a number.
    public var minimum: Int64?
    /// Greatest value of a number.
    public var maximum: Int64?
    /// The strings allowed (`enum`).
    public var enumeration: [String]?
    /// The booleans allowed (`enum`), for a flag only one value of which an alternative allows.
    public var booleanEnumeration: [Bool]?
    /// Whether null is allowed too.
    public var nullable = false
    /// The fewest items an array may have.
    public var minItems: Int?
    /// An object's properties, in order.
    public var properties: [Property] = []
    /// Whether an object may hold keys other than `properties` (nil: not said, which allows them).
    public var additionalProperties: Bool?
    /// Alternatives of which at least one must hold (`anyOf`).
    public var anyOf: [JSONSchema] = []
    /// What the daemon fills in (see `Refinement`).
    public var refinement: Refinement?
    /// The element schema of an array (boxed: a struct cannot hold itself).
    private var itemBox: [JSONSchema] = []

    /// A schema of `type` and nothing else (any value when nil).
    public init(type: JSONType? = nil) { self.type = type }

    /// The element schema of an array.
    public var items: JSONSchema? {
        get { itemBox.first }
        set { itemBox = newValue.map { [$0] } ?? [] }
    }

    /// The names of the required properties, in order.
    public var requiredNames: [String] { properties.filter(\.isRequired).map(\.name) }

    // MARK: building

    /// An object with `properties`; other keys are allowed (the decoders ignore them).
    public static func object(_ description: String, _ properties: [Property]) -> JSONSchema {
        var schema = JSONSchema.object(properties)
        schema.description = description
        return schema
    }

    /// An object with `properties` and no description.
    public static func object(_ properties: [Property]) -> JSONSchema {
        var schema = JSONSchema(type: .object)
        schema.properties = properties
        return schema
    }

    /// Any JSON object (the app-owned `attributes`).
    public static func anyObject(_ description: String? = nil) -> JSONSchema {
        var schema = JSONSchema(type: .object)
        schema.description = description
        schema.additionalProperties = true
        return schema
    }

    /// A string.
    public static func string(
        _ description: String? = nil, format: String? = nil, pattern: String? = nil, minLength: Int? = nil, maxLength: Int? = nil
    ) -> JSONSchema {
        var schema = JSONSchema(type: .string)
        schema.description = description
        schema.format = format
        schema.pattern = pattern
        schema.minLength = minLength
        schema.maxLength = maxLength
        return schema
    }

    /// One of `values`.
    public static func oneOf(_ values: [String], _ description: String? = nil) -> JSONSchema {
        var schema = JSONSchema.string(description)
        schema.enumeration = values
        return schema
    }

    /// A whole number (int64).
    public static func integer(_ description: String? = nil, minimum: Int64? = nil, maximum: Int64? = nil) -> JSONSchema {
        var schema = JSONSchema(type: .integer)
        schema.description = description
        schema.format = "int64"
        schema.minimum = minimum
        schema.maximum = maximum
        return schema
    }

    /// Only `value` (in an alternative of an `anyOf`).
    public static func boolean(only value: Bool) -> JSONSchema {
        var schema = JSONSchema(type: .boolean)
        schema.booleanEnumeration = [value]
        return schema
    }

    /// true or false.
    public static func boolean(_ description: String? = nil) -> JSONSchema {
        var schema = JSONSchema(type: .boolean)
        schema.description = description
        return schema
    }

    /// An array of `items`.
    public static func array(_ items: JSONSchema, _ description: String? = nil, minItems: Int? = nil) -> JSONSchema {
        var schema = JSONSchema(type: .array)
        schema.description = description
        schema.items = items
        schema.minItems = minItems
        return schema
    }

    /// The schema of a documented body, as a reference to its component.
    public static func body<Body: DocumentedBody>(_ type: Body.Type) -> JSONSchema {
        var schema = JSONSchema()
        schema.reference = Body.schemaName
        return schema
    }

    /// This schema, or null.
    public var orNull: JSONSchema {
        var schema = self
        schema.nullable = true
        return schema
    }

    /// This schema with `refinement` for the daemon to fill in.
    public func refined(_ refinement: Refinement) -> JSONSchema {
        var schema = self
        schema.refinement = refinement
        return schema
    }

    /// This schema with a description.
    public func described(_ text: String) -> JSONSchema {
        var schema = self
        schema.description = text
        return schema
    }

    // MARK: rendering

    /// The schema as OpenAPI 3.0 JSON (references stay references); `refine` fills in what the
    /// daemon knows.
    public func json(refine: (JSONSchema) -> JSONSchema = { $0 }) -> JSONValue {
        let schema = refinement == nil ? self : refine(self)
        if let reference = schema.reference {
            let ref = JSONValue.object(["$ref": .string("#/components/schemas/\(reference)")])
            // OpenAPI 3.0 ignores the siblings of a $ref: a nullable reference goes through allOf.
            guard schema.nullable || schema.description != nil else { return ref }
            var wrapped: [String: JSONValue] = ["allOf": .array([ref])]
            if schema.nullable { wrapped["nullable"] = .bool(true) }
            if let description = schema.description { wrapped["description"] = .string(description) }
            return .object(wrapped)
        }
        var object: [String: JSONValue] = [:]
        if let type = schema.type { object["type"] = .string(type.rawValue) }
        if let description = schema.description { object["description"] = .string(description) }
        if let format = schema.format { object["format"] = .string(format) }
        if let pattern = schema.pattern { object["pattern"] = .string(pattern) }
        if let minLength = schema.minLength { object["minLength"] = .integer(Int64(minLength)) }
        if let maxLength = schema.maxLength { object["maxLength"] = .integer(Int64(maxLength)) }
        if let minimum = schema.minimum { object["minimum"] = .integer(minimum) }
        if let maximum = schema.maximum { object["maximum"] = .integer(maximum) }
        // OpenAPI 3.0.3: with `nullable`, an `enum` must list null itself for null to be allowed.
        if let values = schema.enumeration { object["enum"] = .array(values.map(JSONValue.string) + (schema.nullable ? [.null] : [])) }
        if let values = schema.booleanEnumeration { object["enum"] = .array(values.map(JSONValue.bool) + (schema.nullable ? [.null] : [])) }
        if schema.nullable { object["nullable"] = .bool(true) }
        if !schema.properties.isEmpty {
            var properties: [String: JSONValue] = [:]
            for property in schema.properties { properties[property.name] = property.schema.json(refine: refine) }
            object["properties"] = .object(properties)
        }
        let required = schema.requiredNames
        if !required.isEmpty { object["required"] = .array(required.map(JSONValue.string)) }
        if let additional = schema.additionalProperties { object["additionalProperties"] = .bool(additional) }
        if !schema.anyOf.isEmpty { object["anyOf"] = .array(schema.anyOf.map { $0.json(refine: refine) }) }
        if let items = schema.items { object["items"] = items.json(refine: refine) }
        if let minItems = schema.minItems { object["minItems"] = .integer(Int64(minItems)) }
        return .object(object)
    }
}

/// A body of the contract that describes itself: its component name, its schema and a fully
/// populated example (every optional field set) — the document's example, and what the contract
/// test encodes to hold the type to the document.
public protocol DocumentedBody: Codable, Sendable {
    /// The name of its schema under `#/components/schemas`.
    static var schemaName: String { get }
    /// What the body holds.
    static var schema: JSONSchema { get }
    /// Every field set.
    static var example: Self { get }
    /// The other bodies its schema refers to (`JSONSchema.body`), so the document carries them.
    static var referencedBodies: [any DocumentedBody.Type] { get }
}

extension DocumentedBody {
    public static var referencedBodies: [any DocumentedBody.Type] { [] }
}
