/// The words of a locale that are not whole templates — the units a mail says how long a link
/// lasts in ("10 minutes", "3 Tage") — read from `LOCALE/words.strings` beside the templates, so
/// a language is added by adding files, never by editing Swift.
///
/// The file has one `key = value` line per word; blank lines and lines starting with `#` are
/// skipped. `en` must have every word; another locale may leave words out (they fall back to
/// `en`'s). An unknown key or a line without `=` is a problem for `templates check`.
public enum MailWord: String, Sendable, Hashable, CaseIterable {
    case minuteOne = "minute.one"
    case minuteOther = "minute.other"
    case hourOne = "hour.one"
    case hourOther = "hour.other"
    case dayOne = "day.one"
    case dayOther = "day.other"
}

/// The words of every locale, with `en` as the fallback.
public struct MailWords: Sendable, Hashable {
    private let byLocale: [String: [MailWord: String]]

    /// The words of each locale (`en` must be complete: ``TemplateSet`` checks it).
    init(_ byLocale: [String: [MailWord: String]]) { self.byLocale = byLocale }

    /// `word` in `locale` (tried as given, then shortened), else in `en`, else its key.
    public func word(_ word: MailWord, locale: String) -> String {
        for candidate in MailLocale.candidates([locale]) {
            if let value = byLocale[candidate]?[word] { return value }
        }
        return byLocale[MailLocale.fallback]?[word] ?? word.rawValue
    }

    /// Parses one `words.strings` file: the words, and the problems of its lines.
    static func parse(_ source: String, name: String) -> (words: [MailWord: String], problems: [TemplateProblem]) {
        var words: [MailWord: String] = [:]
        var problems: [TemplateProblem] = []
        for (index, raw) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let equals = line.firstIndex(of: "=") else {
                problems.append(TemplateProblem(.unknownWord, templateName: name, line: index + 1, column: 1, detail: "expected key = value"))
                continue
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let word = MailWord(rawValue: key), !value.isEmpty else {
                problems.append(
                    TemplateProblem(
                        .unknownWord, templateName: name, line: index + 1, column: 1,
                        detail: "\(key) is not one of \(MailWord.allCases.map(\.rawValue).joined(separator: ", ")), or has no value"))
                continue
            }
            words[word] = value
        }
        return (words, problems)
    }
}
