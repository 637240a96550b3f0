internal import CPhoneNumbers

/// The world's telephone numbering plans through libphonenumber (Debian's `libphonenumber-dev`,
/// Google's metadata of every country's ranges): which country a number belongs to, whether it
/// is a number in use, and what kind of line it is — what a hand-made table of calling codes
/// cannot say (+1 is the United States and two dozen Caribbean countries; +44 7624 is the Isle of
/// Man). Pure computation over metadata compiled into the library: no files, no network.
public enum NumberingPlan {
    /// What kind of line a number is, as the plan of its region says.
    public enum Kind: Sendable, Hashable, CaseIterable {
        case fixedLine, mobile, fixedLineOrMobile, tollFree, premiumRate, sharedCost, voip, personalNumber, pager
        /// Universal access ("company") numbers.
        case uan
        case voicemail, unknown
    }

    /// How the number's length fits its region's numbers.
    public enum Length: Sendable, Hashable {
        case possible, possibleLocalOnly, invalidCountryCode, tooShort, invalid, tooLong
    }

    /// Why the library could not read a text as a number at all.
    public enum ParseFailure: Error, Sendable, Hashable {
        case invalidCountryCode, notANumber, tooShortAfterInternationalPrefix, tooShort, tooLong
        /// Anything else (memory, a result that does not fit): not the input's fault.
        case failed
    }

    /// A number as the library reads it.
    public struct Number: Sendable, Hashable {
        /// `+`, the calling code and the national significant number: the one form of the number.
        public let e164: String
        /// The country calling code (`49`).
        public let callingCode: Int
        /// The ISO 3166 alpha-2 region whose plan holds the number; `001` for a non-geographic
        /// entity (+800, +882…); `ZZ` for none.
        public let region: String
        /// Whether the number lies in a range its region's plan assigns.
        public let isValid: Bool
        public let length: Length
        public let kind: Kind
    }

    /// Reads `text` — `+` and digits, or national digits dialled in `region` (ISO 3166 alpha-2;
    /// nil: international only) — as the library does, national and international prefixes
    /// included (`0151…` in DE, `0049…`, `+49 0151…` are all `+49151…`).
    /// - Returns: the number, or why it is not one.
    public static func parse(_ text: String, region: String?) -> Result<Number, ParseFailure> {
        var raw = postern_phone_number()
        let result = postern_phone_parse(text, region ?? "ZZ", &raw)
        guard result == POSTERN_PHONE_PARSED else {
            switch result {
            case POSTERN_PHONE_INVALID_COUNTRY_CODE: return .failure(.invalidCountryCode)
            case POSTERN_PHONE_NOT_A_NUMBER: return .failure(.notANumber)
            case POSTERN_PHONE_TOO_SHORT_AFTER_IDD: return .failure(.tooShortAfterInternationalPrefix)
            case POSTERN_PHONE_TOO_SHORT_NSN: return .failure(.tooShort)
            case POSTERN_PHONE_TOO_LONG_NSN: return .failure(.tooLong)
            default: return .failure(.failed)
            }
        }
        return .success(
            Number(
                e164: string(&raw.e164), callingCode: Int(raw.calling_code), region: string(&raw.region), isValid: raw.valid != 0,
                length: length(raw.length), kind: kind(raw.type)))
    }

    /// The calling code of `region` (ISO 3166 alpha-2, any case), or nil when the library has no
    /// numbering plan for it.
    public static func callingCode(region: String) -> Int? {
        let code = Int(postern_phone_calling_code_for_region(region.uppercased()))
        return code > 0 ? code : nil
    }

    /// The regions that share `callingCode`, the main one first (`1`: `US`, `AG`, `AI`, …); empty
    /// when the code is not assigned to a country.
    public static func regions(callingCode: Int) -> [String] {
        guard let code = Int32(exactly: callingCode) else { return [] }
        return list { postern_phone_regions_for_calling_code(code, $0, $1) }
    }

    /// Every region the library has a numbering plan for, sorted.
    public static let supportedRegions: [String] = list { postern_phone_supported_regions($0, $1) }

    /// A comma-separated list a C call writes, grown until it fits.
    private static func list(_ call: (UnsafeMutablePointer<CChar>, Int) -> Int) -> [String] {
        var capacity = 1024
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let needed = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
                guard let base = pointer.baseAddress else { return 0 }
                return call(base, pointer.count)
            }
            if needed < capacity {
                let text = buffer.withUnsafeBufferPointer { pointer in
                    String(decoding: pointer.prefix(needed).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                }
                return text.split(separator: ",").map(String.init)
            }
            capacity = needed + 1
        }
    }

    /// The NUL-terminated text of a fixed C array (imported as a tuple).
    private static func string<T>(_ field: inout T) -> String {
        withUnsafeBytes(of: &field) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private static func length(_ raw: postern_phone_length) -> Length {
        switch raw {
        case POSTERN_PHONE_IS_POSSIBLE: .possible
        case POSTERN_PHONE_IS_POSSIBLE_LOCAL_ONLY: .possibleLocalOnly
        case POSTERN_PHONE_LENGTH_INVALID_COUNTRY_CODE: .invalidCountryCode
        case POSTERN_PHONE_LENGTH_TOO_SHORT: .tooShort
        case POSTERN_PHONE_LENGTH_TOO_LONG: .tooLong
        default: .invalid
        }
    }

    private static func kind(_ raw: postern_phone_type) -> Kind {
        switch raw {
        case POSTERN_PHONE_FIXED_LINE: .fixedLine
        case POSTERN_PHONE_MOBILE: .mobile
        case POSTERN_PHONE_FIXED_LINE_OR_MOBILE: .fixedLineOrMobile
        case POSTERN_PHONE_TOLL_FREE: .tollFree
        case POSTERN_PHONE_PREMIUM_RATE: .premiumRate
        case POSTERN_PHONE_SHARED_COST: .sharedCost
        case POSTERN_PHONE_VOIP: .voip
        case POSTERN_PHONE_PERSONAL_NUMBER: .personalNumber
        case POSTERN_PHONE_PAGER: .pager
        case POSTERN_PHONE_UAN: .uan
        case POSTERN_PHONE_VOICEMAIL: .voicemail
        default: .unknown
        }
    }
}
