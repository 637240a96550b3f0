/// What the parser knows of a country: its calling code, and how national numbers are dialled
/// there (the trunk prefix dropped, the international prefix read as `+`). Also the table of
/// assigned country calling codes, which says how many digits of an E.164 number are the code.
public struct PhoneRegion: Sendable, Hashable {
    /// ISO 3166 alpha-2, upper-case (`DE`).
    public let code: String
    /// The country calling code, without `+`.
    public let callingCode: String
    /// The prefix national numbers are dialled with and E.164 leaves out (`0`; `1` in the North
    /// American plan; none in Italy, Spain, Norway…).
    let trunkPrefix: String?
    /// The prefix that dials out of the country (`00`; `011` in the North American plan).
    let internationalPrefix: String

    /// The region named `code` (case-insensitive), or nil when the parser does not know it.
    public static func named(_ code: String) -> PhoneRegion? {
        let upper = code.uppercased()
        guard let (callingCode, trunk, international) = table[upper] else { return nil }
        return PhoneRegion(code: upper, callingCode: callingCode, trunkPrefix: trunk, internationalPrefix: international)
    }

    /// Every region the parser knows, by code.
    public static var knownCodes: [String] { table.keys.sorted() }

    /// The E.164 digits (without `+`) of `national` digits dialled in this region.
    func internationalDigits(national: [UInt8]) -> [UInt8] {
        let text = String(decoding: national, as: UTF8.self)
        if text.hasPrefix(internationalPrefix) { return Array(text.dropFirst(internationalPrefix.count).utf8) }
        if let trunkPrefix, text.hasPrefix(trunkPrefix) {
            // The North American plan's 1 is also the country code: only 11 digits carry it.
            if callingCode == "1" && text.count != 11 { return Array((callingCode + text).utf8) }
            return Array((callingCode + text.dropFirst(trunkPrefix.count)).utf8)
        }
        return Array((callingCode + text).utf8)
    }

    /// How many leading digits of `digits` (E.164 without `+`) are an assigned country calling
    /// code, or nil when none is.
    static func countryCodeLength(_ digits: [UInt8]) -> Int? {
        let text = String(decoding: digits.prefix(3), as: UTF8.self)
        if text.hasPrefix("1") || text.hasPrefix("7") { return 1 }
        if twoDigitCodes.contains(String(text.prefix(2))) { return 2 }
        if text.count == 3, threeDigitCodes.contains(text) { return 3 }
        return nil
    }

    /// The assigned two-digit country codes (ITU-T E.164 list).
    static let twoDigitCodes: Set<String> = [
        "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46", "47", "48", "49", "51", "52",
        "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65", "66", "81", "82", "84", "86", "90", "91", "92",
        "93", "94", "95", "98",
    ]

    /// The assigned three-digit country codes, including the international networks (8xx, 88x).
    static let threeDigitCodes: Set<String> = {
        var codes: Set<String> = [
            "211", "212", "213", "216", "218", "290", "291", "297", "298", "299", "350", "351", "352", "353", "354", "355",
            "356", "357", "358", "359", "370", "371", "372", "373", "374", "375", "376", "377", "378", "379", "380", "381",
            "382", "383", "385", "386", "387", "389", "420", "421", "423", "670", "672", "673", "674", "675", "676", "677",
            "678", "679", "680", "681", "682", "683", "685", "686", "687", "688", "689", "690", "691", "692", "800", "808",
            "850", "852", "853", "855", "856", "870", "878", "880", "881", "882", "883", "886", "888", "960", "961", "962",
            "963", "964", "965", "966", "967", "968", "970", "971", "972", "973", "974", "975", "976", "977", "979", "992",
            "993", "994", "995", "996", "998",
        ]
        for code in 220...258 { codes.insert(String(code)) }
        for code in 260...269 { codes.insert(String(code)) }
        for code in 500...509 { codes.insert(String(code)) }
        for code in 590...599 { codes.insert(String(code)) }
        return codes
    }()

    /// Region → (calling code, trunk prefix, international prefix).
    private static let table: [String: (String, String?, String)] = [
        "US": ("1", "1", "011"), "CA": ("1", "1", "011"), "PR": ("1", "1", "011"),
        "DE": ("49", "0", "00"), "AT": ("43", "0", "00"), "CH": ("41", "0", "00"), "LI": ("423", nil, "00"),
        "GB": ("44", "0", "00"), "IE": ("353", "0", "00"), "FR": ("33", "0", "00"), "BE": ("32", "0", "00"),
        "NL": ("31", "0", "00"), "LU": ("352", nil, "00"), "IT": ("39", nil, "00"), "ES": ("34", nil, "00"),
        "PT": ("351", nil, "00"), "GR": ("30", nil, "00"), "MT": ("356", nil, "00"), "CY": ("357", nil, "00"),
        "DK": ("45", nil, "00"), "NO": ("47", nil, "00"), "SE": ("46", "0", "00"), "FI": ("358", "0", "00"),
        "IS": ("354", nil, "00"), "EE": ("372", nil, "00"), "LV": ("371", nil, "00"), "LT": ("370", "0", "00"),
        "PL": ("48", nil, "00"), "CZ": ("420", nil, "00"), "SK": ("421", "0", "00"), "HU": ("36", "06", "00"),
        "SI": ("386", "0", "00"), "HR": ("385", "0", "00"), "RS": ("381", "0", "00"), "BA": ("387", "0", "00"),
        "RO": ("40", "0", "00"), "BG": ("359", "0", "00"), "UA": ("380", "0", "00"), "MD": ("373", "0", "00"),
        "TR": ("90", "0", "00"), "RU": ("7", "8", "810"), "KZ": ("7", "8", "810"), "IL": ("972", "0", "00"),
        "AE": ("971", "0", "00"), "SA": ("966", "0", "00"), "EG": ("20", "0", "00"), "MA": ("212", "0", "00"),
        "NG": ("234", "0", "009"), "KE": ("254", "0", "000"), "ZA": ("27", "0", "00"), "IN": ("91", "0", "00"),
        "PK": ("92", "0", "00"), "BD": ("880", "0", "00"), "CN": ("86", "0", "00"), "HK": ("852", nil, "001"),
        "TW": ("886", "0", "002"), "JP": ("81", "0", "010"), "KR": ("82", "0", "001"), "SG": ("65", nil, "000"),
        "MY": ("60", "0", "00"), "TH": ("66", "0", "001"), "VN": ("84", "0", "00"), "PH": ("63", "0", "00"),
        "ID": ("62", "0", "001"), "AU": ("61", "0", "0011"), "NZ": ("64", "0", "00"), "BR": ("55", "0", "00"),
        "AR": ("54", "0", "00"), "CL": ("56", nil, "00"), "CO": ("57", nil, "00"), "PE": ("51", "0", "00"),
        "MX": ("52", nil, "00"),
    ]
}
