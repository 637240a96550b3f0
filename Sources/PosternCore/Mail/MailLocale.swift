/// Picks the template locale: the request's locale, then the account's preference, then `en`.
public enum MailLocale {
    /// The locale every template set must have complete, and the last one tried.
    public static let fallback = "en"

    /// The locales to try, most wanted first, ending with ``fallback``.
    ///
    /// Each preference is normalized (lower case, `_` as `-`, a `.UTF-8` or `@variant` tail
    /// dropped) and followed by its shorter forms: `de-AT` → `de-at`, `de`. Nil, empty and
    /// malformed preferences are skipped.
    public static func candidates(_ preferences: [String?]) -> [String] {
        var out: [String] = []
        for preference in preferences {
            guard let preference, var tag = normalized(preference) else { continue }
            while true {
                if !out.contains(tag) { out.append(tag) }
                guard let cut = tag.lastIndex(of: "-") else { break }
                tag = String(tag[..<cut])
            }
        }
        if !out.contains(fallback) { out.append(fallback) }
        return out
    }

    /// `tag` in the form template directories are named in, or nil when it is no language tag.
    public static func normalized(_ tag: String) -> String? {
        var text = tag.trimmingSpaces().lowercased().replacingUnderscores()
        if let cut = text.firstIndex(where: { $0 == "." || $0 == "@" }) { text = String(text[..<cut]) }
        let subtags = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = subtags.first, (2...3).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLetter }),
            subtags.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
        else { return nil }
        return text
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }

    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
