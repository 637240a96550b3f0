import Foundation

/// How long a link is valid, in words of the mail's language.
enum ValidityText {
    /// "10 minutes", "2 hours", "3 days" (English), "10 Minuten", "2 Stunden", "3 Tage" (German);
    /// other languages get English until they are added here.
    static func text(seconds: Double, locale: String) -> String {
        let minutes = wholeMinutes(seconds)
        let german = locale == "de" || locale.hasPrefix("de-")
        let (count, unit): (Int, Int)
        if minutes < 120 {
            (count, unit) = (minutes, 0)
        } else if minutes < 48 * 60 {
            (count, unit) = (Int((Double(minutes) / 60).rounded()), 1)
        } else {
            (count, unit) = (Int((Double(minutes) / 1_440).rounded()), 2)
        }
        let names =
            german
            ? [("Minute", "Minuten"), ("Stunde", "Stunden"), ("Tag", "Tage")]
            : [("minute", "minutes"), ("hour", "hours"), ("day", "days")]
        return "\(count) \(count == 1 ? names[unit].0 : names[unit].1)"
    }

    /// Whole minutes left, rounded to the nearest and never below 1.
    static func wholeMinutes(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return 1 }
        return max(1, Int(min(seconds, 1e9) / 60 + 0.5))
    }
}
