/// ISO 8601 UTC timestamps (`2026-11-30T10:04:16Z`), computed with civil-date arithmetic
/// (`UTCDateTime`): no formatter, no locale data loaded, cheap enough for every log line.
public enum UTCTimestamp {
    /// `seconds` since 1970 as `YYYY-MM-DDTHH:MM:SSZ`.
    public static func iso8601(_ seconds: Int64) -> String {
        let t = UTCDateTime(seconds: seconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = t.year >= 0 && t.year < 1000 ? String(repeating: "0", count: 4 - "\(t.year)".count) + "\(t.year)" : "\(t.year)"
        return "\(yearText)-\(two(t.month))-\(two(t.day))T\(two(t.hour)):\(two(t.minute)):\(two(t.second))Z"
    }
}
