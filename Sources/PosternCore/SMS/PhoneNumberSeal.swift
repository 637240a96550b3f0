import PosternCrypto
import Synchronization

/// Seals the number of a queued SMS for the database (AES-256-GCM under the master key file's
/// key, bound to its purpose), so the number is never in the clear there: the SMS outbox holds the
/// sealed number until the message is finished, then not even that. A store opened without one
/// refuses to queue an SMS.
public struct PhoneNumberSeal: Sendable {
    private let box: SecretBox
    private static let context = Array("postern-sms-recipient".utf8)

    /// A seal under `box` (the master key's, as the signing keys are sealed).
    public init(box: SecretBox) { self.box = box }

    /// The sealed E.164 text.
    /// - Throws: `StoreError.unavailable` when the random nonce cannot be made.
    public func seal(_ number: PhoneNumber) throws -> [UInt8] {
        do { return try box.seal(Array(number.e164.utf8), context: Self.context) } catch {
            throw StoreError.unavailable("cannot seal an SMS recipient: \(error)")
        }
    }

    /// The number `sealed` holds.
    /// - Throws: `StoreError.corrupt` when it does not open (another master key, a damaged row).
    public func open(_ sealed: [UInt8]) throws -> PhoneNumber {
        do {
            let text = String(decoding: try box.open(sealed, context: Self.context), as: UTF8.self)
            return try PhoneNumber.restored(e164: text)
        } catch {
            throw StoreError.corrupt("an SMS recipient does not open under this master key")
        }
    }
}

/// Where a store finds its ``PhoneNumberSeal``: set once the master key is loaded, which happens
/// after the store has opened (so a database that cannot be opened is reported before a master
/// key file is made for it). Until then, and for a store opened without one, SMS cannot be queued.
public final class PhoneSealSlot: Sendable {
    private let seal = Mutex<PhoneNumberSeal?>(nil)

    /// An empty slot, or one holding `seal`.
    public init(_ seal: PhoneNumberSeal? = nil) { self.seal.withLock { $0 = seal } }

    /// Puts `seal` in the slot.
    public func set(_ seal: PhoneNumberSeal) { self.seal.withLock { $0 = seal } }

    /// The seal, if set.
    public var current: PhoneNumberSeal? { seal.withLock { $0 } }
}
