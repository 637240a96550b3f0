internal import CLibPQ

/// A libpq connection string — a `postgres://` URI or `key=value` pairs — and what may be said of
/// it: where it points, never its password.
public struct PostgresConnectionString: Sendable, CustomStringConvertible {
    /// The string as the operator gave it (it may hold a password: never log it).
    let text: String
    /// The password it holds, if any, to scrub from libpq's messages.
    let password: String?
    /// host, port, dbname and user as parsed, for messages.
    private let target: String

    /// Parses `text`; nil unless it is a PostgreSQL connection string (a URI starting with
    /// `postgres://` or `postgresql://`, or libpq `key=value` pairs with known keys).
    public init?(_ text: String) {
        let isURI = text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
        guard isURI || text.contains("="), let options = Self.parse(text) else { return nil }
        self.text = text
        let password = options["password"].flatMap { $0.isEmpty ? nil : $0 }
        self.password = password
        let target = ["host", "hostaddr", "port", "dbname", "user"].compactMap { key in options[key].map { "\(key)=\($0)" } }
            .joined(separator: " ")
        self.target = password.map { target.replacing($0, with: "•••") } ?? target
    }

    /// Whether `database` (the `--database` setting) names a PostgreSQL database rather than a
    /// SQLite file.
    public static func isPostgres(_ database: String) -> Bool { PostgresConnectionString(database) != nil }

    /// Whether `database` was meant as a connection string, parsed or not: a `postgres://` or
    /// `postgresql://` URL, or `key=value` text naming a libpq keyword. One that libpq cannot read
    /// (a raw `%` in a URL's password) must be refused as such, not opened as a SQLite file named
    /// after it, whose error message would show the password.
    public static func isMeantAsPostgres(_ database: String) -> Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
            || ["host=", "hostaddr=", "dbname=", "user=", "password="].contains { database.contains($0) }
    }

    /// Where it points, without the password: `PostgreSQL host=… port=… dbname=… user=…`.
    public var description: String { target.isEmpty ? "PostgreSQL (libpq defaults)" : "PostgreSQL \(target)" }

    /// `message` with every occurrence of the password replaced (libpq's messages do not quote
    /// it, but one that echoed a malformed string would).
    func scrub(_ message: String) -> String {
        guard let password else { return message }
        return message.replacing(password, with: "•••")
    }

    /// The keywords libpq reads from `text`, or nil when it cannot parse it.
    private static func parse(_ text: String) -> [String: String]? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            if let error { PQfreemem(error) }
            return nil
        }
        defer { PQconninfoFree(options) }
        var found: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { found[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return found
    }
}
