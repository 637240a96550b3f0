import PosternCore

/// The hosted page's words in one language: those of `templates/LOCALE/page.strings`, the
/// language chosen like a mail's (as asked, then shortened, then `en`).
struct PageText {
    /// The language the page is in.
    let lang: String
    private let words: PageWords

    init(lang: String?, words: PageWords) {
        self.words = words
        self.lang = words.locale(for: lang?.lowercased())
    }

    /// The word with this key (a ``PageWord`` raw value), or the key itself when there is none.
    subscript(_ key: String) -> String {
        guard let word = PageWord(rawValue: key) else { return key }
        return words.word(word, locale: lang)
    }
}
