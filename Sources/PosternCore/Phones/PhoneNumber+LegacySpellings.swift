extension PhoneNumber {
    /// Digits the parser before libphonenumber (04a969a) kept between the country code and the
    /// national number when they were typed there: it stored every digit after `+` as typed, and
    /// of national input (`0049 0151…` in `DE`) every digit after the international prefix. So a
    /// trunk prefix kept after the country code (`+49 0151…`, `+49 00151…`, `+36 06…`, `+7 8…`,
    /// `+1 1…`) or Mexico's old mobile `1` and `044`/`045` stayed in its "E.164", which the
    /// parser now drops. Candidates only: ``legacySpellings`` keeps those the parser reads as
    /// this very number.
    static let legacyInfixes = ["0", "00", "000", "1", "8", "06", "01", "02", "044", "045"]

    /// The E.164 texts the parser before libphonenumber could have stored for this number and
    /// the parser now reads as it (`+49015112345678` and `+490015112345678` for
    /// `+4915112345678`), in the order a holding under one of them is looked for: the number's
    /// keyed hash was made of the text as stored, so a number verified under an old spelling is
    /// found only under that spelling's hash until it is re-keyed. Each is at most 15 digits (the
    /// old parser refused more) and is read again by today's parser, so a spelling that is
    /// another number of its own (in its plan) is never listed: a holding is never re-keyed onto
    /// a number it is not. Does not list rewritten forms (Argentina's `11 15 …` read as
    /// `9 11 …`): only digits inserted after the country code.
    public var legacySpellings: [String] {
        Self.legacyInfixes.compactMap { infix in
            let spelling = "+\(countryCallingCode)\(infix)\(nationalNumber)"
            guard spelling.utf8.count - 1 <= Self.maximumDigits,
                let read = try? PhoneNumber.read(spelling, defaultRegion: nil, check: .unchecked), read.e164 == e164
            else { return nil }
            return spelling
        }
    }
}
