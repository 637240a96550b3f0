// TEMPORARY stand-in for the SMS contract of branch `sms` (deleted when it is merged): the
// names and shapes of /work/briefs/sms-contract.md, so this branch compiles until then.
public struct PhoneNumberError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String { "The phone number is not a valid E.164 number." }
}

public struct PhoneNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    public var e164: String
    public var countryCallingCode: String
    public static func parse(_ input: String, defaultRegion: String?) throws(PhoneNumberError) -> PhoneNumber {
        let digits = input.filter { $0.isASCII && $0.isNumber }
        guard input.hasPrefix("+"), (8...15).contains(digits.count), digits.first != "0",
            input.dropFirst().allSatisfy({ $0.isASCII && ($0.isNumber || " -.()".contains($0)) })
        else { throw PhoneNumberError() }
        let cc = digits.hasPrefix("1") ? "1" : String(digits.prefix(2))
        return PhoneNumber(e164: "+" + digits, countryCallingCode: cc)
    }
    public var redacted: String { "+\(countryCallingCode)…" }
    public var description: String { redacted }
}

public enum SMSIntent: Sendable, Hashable, Codable {
    case phoneClaim(claimID: String)
    case phoneSignIn(requestID: String)
    case test(reference: String)
}

extension StoreWriter {
    public func enqueueSMS(_ intent: SMSIntent, recipient: PhoneNumber, now: Int64, giveUpAt: Int64) throws -> Int64 { 0 }
}

public struct SMSAdmission: Sendable {
    public init() {}
    public func admit(_ number: PhoneNumber, clientIP: String?, signedIn: Bool, now: Int64, tx: any StoreWriter) throws(AuthError) {}
}
