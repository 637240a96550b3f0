import Foundation
import PosternAPI

/// A logger: a label, a level and metadata passed down as a value (the swift-log shape); lines
/// are one JSON object each, handed to the sink. Never give it secrets.
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: String, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }

        private var rank: Int {
            switch self {
            case .debug: 0
            case .info: 1
            case .warning: 2
            case .error: 3
            }
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

    /// Logs `message` with `fields` at `level`. The fields and the time are worked out only when
    /// the line is written (autoclosures, as in swift-log): a debug line the level drops costs a
    /// comparison, where its fields' dictionary and strings were built and thrown away (one such
    /// line per message an outbox worker sends).
    public func log(
        _ level: Level, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:],
        now: @autoclosure () -> Date = Date()
    ) {
        guard level >= self.level else { return }
        var object: [String: String] = metadata.merging(fields()) { $1 }
        object["ts"] = UTCTimestamp.iso8601(Int64(now().timeIntervalSince1970.rounded(.down)))
        object["level"] = level.rawValue
        object["logger"] = label
        object["msg"] = message()
        // JSONValue's writer, not JSONSerialization: `.sortedKeys` there compares keys under a
        // `Locale`, which loaded ICU's locale data at the daemon's first line (2.2 MB of its idle
        // RSS) and compared every line's keys through it.
        sink(JSONValue.object(strings: object).sortedJSONText)
    }

    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:]) {
        log(.info, message(), fields())
    }
    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:]) {
        log(.warning, message(), fields())
    }
    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: String] = [:]) {
        log(.error, message(), fields())
    }
}
