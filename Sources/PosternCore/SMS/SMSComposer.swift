/// The SMS content stage (``SMSComposing``), beside ``MailComposer``: what a claimed SMS says,
/// decided at delivery time. The test message is the operator's; the phone claim's and the phone
/// sign-in's codes are derived from their ids with the key ring (the phone flows).
extension AuthService: SMSComposing {
    /// The example code of a test SMS: fixed, so nobody mistakes it for a real one.
    public static let testSMSCode = "000000"

    public func composeSMS(_ intent: SMSIntent, recipient: PhoneNumber) throws(AuthError) -> SMSContent? {
        switch intent {
        case .test:
            return SMSContent(kind: .test, code: Self.testSMSCode)
        case .phoneClaim, .phoneTransferNotice:
            return try phoneClaimSMS.compose(intent, recipient: recipient)
        case .phoneSignIn(let requestID):
            return try phoneSignIn.composeSMS(requestID: requestID, recipient: recipient)
        }
    }

    /// Queues a test SMS to `number` (`postern sms test`): an operator's own request, so no
    /// toll-fraud cap applies but the country allowlist, which says where SMS may go at all.
    /// - Throws: `AuthError.smsCountryNotAllowed`, or `unavailable` when the store fails.
    public func queueTestSMS(to number: PhoneNumber, reference: String) throws(AuthError) -> Int64 {
        guard context.config.sms.countries.contains(number.region) else { throw .smsCountryNotAllowed }
        let now = context.clock.unixSeconds()
        let giveUp = now + context.config.sms.policy.maximumAge
        let id = try context.write { tx in try tx.enqueueSMS(.test(reference: reference), recipient: number, now: now, giveUpAt: giveUp) }
        context.smsMetrics.count(.queued, callingCode: number.countryCallingCode)
        return id
    }

    /// The SMS outbox's messages in `state` (all when nil), newest first.
    /// - Throws: `unavailable` when the store fails.
    public func smsMessages(state: OutboxState?, limit: Int) throws(AuthError) -> [SMSMessage] {
        try context.read { try $0.smsMessages(state: state, limit: limit) }
    }
}
