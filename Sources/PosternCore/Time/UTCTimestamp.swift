/// ISO 8601 UTC timestamps (`2026-11-30T10:04:16Z`), computed with civil-date arithmetic: no
/// formatter, no locale data loaded, cheap enough for every log line.
public enum UTCTimestamp {
    /// `seconds` since 1970 as `YYYY-MM-DDTHH:MM:SSZ`.
    public static func iso8601(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days since 1970-01-01 to a proleptic Gregorian date (Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - "\(year)".count) + "\(year)" : "\(year)"
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600))"
            + ":\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }
}
