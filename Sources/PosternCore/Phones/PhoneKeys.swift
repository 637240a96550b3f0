import Foundation
import PosternCrypto

/// What the phone key derives, in one place: a number's keyed hash, a claim's code and its keyed
/// hash; and the shapes a typed code and a claim id must have before anything is looked up.
enum PhoneKeys {
    /// The number's keyed hash: equal numbers, equal hashes; a copy of the database alone cannot
    /// be searched with a list of numbers.
    static func numberHash(_ number: PhoneNumber, ring: KeyRing) -> [UInt8] {
        numberHash(e164: number.e164, ring: ring)
    }

    /// The keyed hash of a number's E.164 text as stored: also of an old spelling
    /// (``PhoneNumber/legacySpellings``), which the parser no longer makes.
    static func numberHash(e164: String, ring: KeyRing) -> [UInt8] {
        ring.phoneNumbers.authenticate(Array("postern-phone-number|\(e164)".utf8))
    }

    /// The claim's 6-digit code: derived from its id under the phone key, so the store keeps
    /// only its keyed hash and the SMS composer derives it again.
    static func code(claimID: String, ring: KeyRing) -> String {
        sixDigits(ring.phoneNumbers.authenticate(Array("postern-phone-claim-code|\(claimID)".utf8)))
    }

    /// Six decimal digits from a MAC's first four bytes (leading zeros kept).
    static func sixDigits(_ mac: [UInt8]) -> String {
        let value = UInt32(mac[0]) << 24 | UInt32(mac[1]) << 16 | UInt32(mac[2]) << 8 | UInt32(mac[3])
        let digits = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// The keyed hash of `code` as the code of claim `claimID`: a code is bound to its claim.
    static func codeHash(claimID: String, code: String, ring: KeyRing) -> [UInt8] {
        ring.phoneNumbers.authenticate(Array("postern-phone-claim-code-hash|\(claimID)|\(code)".utf8))
    }

    /// The typed code: exactly 6 ASCII digits.
    static func checkCodeShape(_ code: String) throws(AuthError) {
        guard code.utf8.count == 6, code.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw .invalidArgument("code must be the 6 digits from the SMS.")
        }
    }

    /// A claim id's shape (22 base64url characters), checked before any lookup.
    static func checkClaimID(_ id: String) throws(AuthError) {
        guard id.utf8.count == 22, Base64URL.decode(id)?.count == 16 else { throw AuthError.invalidPhoneCode }
    }
}

extension FlowContext {
    /// `text` as a phone number in the configured default region.
    /// - Throws: `invalidPhoneNumber` with the parser's reason.
    func parsePhoneNumber(_ text: String) throws(AuthError) -> PhoneNumber {
        do {
            return try PhoneNumber.parse(text, defaultRegion: config.sms.defaultRegion)
        } catch {
            throw .invalidPhoneNumber(error)
        }
    }
}
