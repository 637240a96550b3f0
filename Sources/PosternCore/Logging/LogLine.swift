import Foundation

/// A logger: a label, a level and metadata passed down as a value (the swift-log shape); lines
/// are one JSON object each, handed to the sink. Never give it secrets.
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: String, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool {
            let order: [Level] = [.debug, .info, .warning, .error]
            return (order.firstIndex(of: a) ?? 0) < (order.firstIndex(of: b) ?? 0)
        }
    }

    /// Where lines go (stderr in the CLI).
    public let sink: @Sendable (String) -> Void
    /// The component name.
    public var label: String
    /// Lines below this level are dropped.
    public var level: Level
    /// Fields added to every line.
    public var metadata: [String: String]

    /// Creates a logger.
    public init(label: String, level: Level = .info, metadata: [String: String] = [:], sink: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.level = level
        self.metadata = metadata
        self.sink = sink
    }

    /// Logs `message` with `fields` at `level`.
    public func log(_ level: Level, _ message: String, _ fields: [String: String] = [:], now: Date = Date()) {
        guard level >= self.level else { return }
        var object: [String: String] = metadata.merging(fields) { $1 }
        object["ts"] = UTCTimestamp.iso8601(Int64(now.timeIntervalSince1970.rounded(.down)))
        object["level"] = level.rawValue
        object["logger"] = label
        object["msg"] = message
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        sink(String(decoding: data, as: UTF8.self))
    }

    public func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
}
