import PosternCore

/// A failure reported by PostgreSQL or by libpq: the SQLSTATE, the server's primary message, the
/// constraint it names, and the statement — never bound values (a unique violation's DETAIL line,
/// which quotes the key, is not read) and never the connection string.
struct PostgresError: Error, CustomStringConvertible {
    /// Five characters, or nil when libpq failed on its own (no server answer).
    let sqlState: String?
    let message: String
    let constraint: String?
    let sql: String?
    /// The connection was unusable after the failure (its socket closed, the server gone).
    let connectionLost: Bool

    var description: String {
        "PostgreSQL error \(sqlState ?? "(no SQLSTATE)"): \(message)" + (sql.map { " in `\($0)`" } ?? "")
    }

    /// 40001 serialization_failure or 40P01 deadlock_detected: the transaction may succeed if run again.
    var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// Class 08 (connection exception), 57P01–57P03 (the server shut down or is starting), or a
    /// connection libpq found broken.
    var isConnectionFailure: Bool {
        guard let sqlState else { return connectionLost }
        return connectionLost || sqlState.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    /// The store's error for this failure.
    var storeError: StoreError {
        if sqlState == "23505" {
            // The constraint name says which key; its value stays out of the message.
            if let constraint, constraint.hasPrefix("addresses_") { return .addressTaken }
            return .duplicate(constraint ?? "a unique key")
        }
        if isConnectionFailure { return .unavailable("the connection to PostgreSQL failed: \(message)") }
        return .unavailable(description)
    }
}
