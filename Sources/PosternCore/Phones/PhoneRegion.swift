import PosternPhoneNumbers

/// A region of the world's numbering plans (ISO 3166 alpha-2, `DE`), as libphonenumber knows
/// them: what `--default-region` reads national numbers in, and what `--sms-countries` allows.
/// A calling code is not a country: +1 is the United States and two dozen Caribbean countries,
/// +44 is also Guernsey, Jersey and the Isle of Man, +7 Russia and Kazakhstan.
public struct PhoneRegion: Sendable, Hashable {
    /// ISO 3166 alpha-2, upper-case (`DE`).
    public let code: String
    /// The country calling code, without `+`.
    public let callingCode: String

    /// The region named `code` (case-insensitive), or nil when it has no numbering plan.
    public static func named(_ code: String) -> PhoneRegion? {
        let upper = code.uppercased()
        // Two letters only: `001` (the non-geographic entities) and `ZZ` are not countries.
        guard upper.utf8.count == 2, upper.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }),
            let callingCode = NumberingPlan.callingCode(region: upper)
        else { return nil }
        return PhoneRegion(code: upper, callingCode: String(callingCode))
    }

    /// Every region with a numbering plan, by code.
    public static var knownCodes: [String] { NumberingPlan.supportedRegions }

    /// The regions whose numbers start with `callingCode` (digits, without `+`), the main one
    /// first: one for `49`, 25 for `1`, none for a code not assigned to a country.
    public static func sharing(callingCode: String) -> [PhoneRegion] {
        guard (1...3).contains(callingCode.utf8.count), callingCode.utf8.first != UInt8(ascii: "0"),
            callingCode.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let code = Int(callingCode)
        else { return [] }
        return NumberingPlan.regions(callingCode: code).map { PhoneRegion(code: $0, callingCode: String(code)) }
    }
}
