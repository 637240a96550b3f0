import Foundation

/// Calendar fields of an instant in UTC, computed without a calendar object so Core stays
/// deterministic and allocation-free here.
struct UTCDateTime: Sendable, Hashable {
    let year: Int
    let month: Int
    let day: Int
    let hour: Int
    let minute: Int
    let second: Int
    /// 0 = Sunday … 6 = Saturday.
    let weekday: Int

    init(_ date: Date) {
        self.init(seconds: Int64(max(-1e15, min(1e15, date.timeIntervalSince1970)).rounded(.down)))
    }

    /// The fields of `seconds` since 1970 (the one calendar computation of the project: log
    /// lines, API times and mail dates all come here). Kept within ±10^15 s (±31 million years),
    /// as from a `Date`: a time a database row holds at either end of `Int64` (an old import)
    /// must not overflow the arithmetic below and trap the daemon.
    init(seconds: Int64) {
        let seconds = Int(max(-1_000_000_000_000_000, min(1_000_000_000_000_000, seconds)))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        hour = secondOfDay / 3_600
        minute = secondOfDay % 3_600 / 60
        second = secondOfDay % 60
        weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (4)
        // Civil-from-days (H. Hinnant): proleptic Gregorian calendar.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// `HH:mm UTC`.
    var clockText: String { "\(twoDigits(hour)):\(twoDigits(minute)) UTC" }

    /// `yyyy-MM-dd`.
    var dateText: String { "\(year)-\(twoDigits(month))-\(twoDigits(day))" }

    /// RFC 5322 date-time, always in UTC: `Sun, 04 May 2025 14:02:07 +0000`.
    var rfc5322Text: String {
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(weekdays[weekday]), \(twoDigits(day)) \(months[month - 1]) \(year) "
            + "\(twoDigits(hour)):\(twoDigits(minute)):\(twoDigits(second)) +0000"
    }

    private func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
