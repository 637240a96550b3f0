/// A phone sign-in code as stored (`--phone-sign-in`, issue 17 point 4): one per number — a newer
/// request replaces the older one, so only the newest SMS's code signs in. The number is kept only
/// as its keyed hash (the row's key) and its country calling code; the code only as a keyed hash
/// bound to the request id (the SMS composer derives the code again from the id).
public struct PhoneSignInCode: Sendable, Hashable {
    /// Random: the SMS outbox's handle (`phone-sign-in:ID`) and what the code's hash is bound to.
    public var requestID: String
    /// HMAC of the E.164 form under the phone key (``PhoneKeys``' number hash): the row's key.
    public var numberHash: [UInt8]
    /// The number's country calling code ("49").
    public var countryCode: String
    /// HMAC of the 6-digit code, bound to `requestID`, under the phone key.
    public var codeHash: [UInt8]
    /// Seconds since 1970.
    public var createdAt: Int64
    /// The code signs in before this (`--phone-code-ttl` after the request).
    public var expiresAt: Int64
    /// Codes typed against this request so far (the right one included while its sign-in is
    /// decided); at the limit every code is refused.
    public var tries: Int
    /// The language the SMS was asked in.
    public var locale: String?

    /// Creates a record.
    public init(
        requestID: String, numberHash: [UInt8], countryCode: String, codeHash: [UInt8], createdAt: Int64, expiresAt: Int64,
        tries: Int = 0, locale: String? = nil
    ) {
        self.requestID = requestID
        self.numberHash = numberHash
        self.countryCode = countryCode
        self.codeHash = codeHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.tries = tries
        self.locale = locale
    }
}
