import Foundation

/// How long a link is valid, in words of the mail's language.
enum ValidityText {
    /// "10 minutes", "2 hours", "3 days" — with the unit words of `locale` from its
    /// `words.strings` (`de`: "10 Minuten", "2 Stunden", "3 Tage"), falling back to `en`.
    static func text(seconds: Double, locale: String, words: MailWords) -> String {
        let minutes = wholeMinutes(seconds)
        let (count, one, other): (Int, MailWord, MailWord)
        if minutes < 120 {
            (count, one, other) = (minutes, .minuteOne, .minuteOther)
        } else if minutes < 48 * 60 {
            (count, one, other) = (Int((Double(minutes) / 60).rounded()), .hourOne, .hourOther)
        } else {
            (count, one, other) = (Int((Double(minutes) / 1_440).rounded()), .dayOne, .dayOther)
        }
        return "\(count) \(words.word(count == 1 ? one : other, locale: locale))"
    }

    /// Whole minutes left, rounded to the nearest and never below 1.
    static func wholeMinutes(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return 1 }
        return max(1, Int(min(seconds, 1e9) / 60 + 0.5))
    }
}
