import PosternCrypto

/// One delivery attempt of an outbox message, as the delivery log keeps it: when, through which
/// transport, what the server answered (its code and its text, cleaned), how long it took, and
/// what came of it. The recipient is there only as a keyed hash (``DeliveryLogKey``): the log
/// never holds an address in the clear.
public struct OutboxAttempt: Sendable, Hashable {
    /// What the attempt came to.
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// Accepted (a 2xx, or written to a file).
        case sent
        /// Failed for now: tried again later.
        case deferred
        /// Refused for good, or the last try before the deadline.
        case failed
    }

    public let messageID: Int64
    /// HMAC-SHA256 of the normalized address under the delivery-log key (16 bytes).
    public let recipientHash: [UInt8]
    /// When the attempt started, Unix seconds.
    public let attemptedAt: Int64
    /// How long it took, in milliseconds.
    public let durationMilliseconds: Int64
    /// `smtp://host:587`, `file`, … (``MailTransportConfig/logLabel``).
    public let transport: String
    /// The server's reply code (`250`, `451`, `550`); nil when there was none (no connection).
    public let replyCode: Int?
    /// The server's reply or the local failure, cleaned (``DeliveryLogKey/clean(_:)``).
    public let reply: String
    public let outcome: Outcome

    public init(
        messageID: Int64, recipientHash: [UInt8], attemptedAt: Int64, durationMilliseconds: Int64, transport: String, replyCode: Int?,
        reply: String, outcome: Outcome
    ) {
        self.messageID = messageID
        self.recipientHash = recipientHash
        self.attemptedAt = attemptedAt
        self.durationMilliseconds = durationMilliseconds
        self.transport = transport
        self.replyCode = replyCode
        self.reply = reply
        self.outcome = outcome
    }
}

/// The key of the delivery log's recipient hashes, and its cleaning of server replies. The key is
/// derived from the master key (HMAC-SHA256 of a fixed label): it does not rotate with the
/// action-code keys, so a message stays findable by address for as long as its log is kept, and a
/// copy of the database alone cannot be searched with a list of addresses.
public struct DeliveryLogKey: Sendable {
    private let key: HMACKey

    /// The key under `box` (the master key).
    /// - Throws: `CryptoError` when the key cannot be made.
    public init(box: SecretBox) throws {
        key = try HMACKey(key: box.derivedKey(label: "postern delivery-log recipient v1"))
    }

    /// The recipient hash of `address`: HMAC-SHA256 of its normalized form, 16 bytes.
    public func hash(_ address: EmailAddress) -> [UInt8] {
        Array(key.authenticate(Array("postern-recipient|\(address.normalized)".utf8)).prefix(16))
    }

    /// The most characters of a reply the log keeps.
    public static let replyLimit = 300

    /// A server reply as the log keeps it: one line, at most ``replyLimit`` characters, with
    /// every word that holds an address (`@`), a link (`://`, `oobCode`) or a long token (24 or
    /// more base64url characters) replaced by `<address>`, `<link>` or `<token>` — servers quote
    /// recipients and sometimes a line of the message back.
    public static func clean(_ reply: String) -> String {
        // Replies are ASCII but for the odd quoted text: those are cleaned on their bytes, without
        // Foundation's substring search, which was 3.5% of the daemon's time in a drain.
        if let ascii = cleanASCII(reply) { return ascii }
        return cleanText(reply)
    }

    /// ``clean(_:)`` of any text, by Unicode scalars and characters.
    static func cleanText(_ reply: String) -> String {
        let flat = String(reply.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        let words = flat.split(separator: " ", omittingEmptySubsequences: true).map { word -> String in
            if word.contains("@") { return "<address>" }
            if word.contains("://") || word.lowercased().contains("oobcode") { return "<link>" }
            var run = 0
            var longest = 0
            for c in word.unicodeScalars {
                let tokenish = (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x41 && c.value <= 0x5A) || (c.value >= 0x61 && c.value <= 0x7A)
                    || c == "-" || c == "_" || c == "+" || c == "/" || c == "="
                run = tokenish ? run + 1 : 0
                longest = max(longest, run)
            }
            return longest >= 24 ? "<token>" : String(word)
        }
        let joined = words.joined(separator: " ")
        return joined.count > replyLimit ? String(joined.prefix(replyLimit - 1)) + "…" : joined
    }

    /// ``clean(_:)`` of an ASCII reply, on its bytes; nil when `reply` is not ASCII.
    static func cleanASCII(_ reply: String) -> String? {
        var reply = reply
        return reply.withUTF8 { bytes -> String? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(min(bytes.count, replyLimit + 8))
            var index = 0
            while index < bytes.count {
                // A word: up to the next space or control byte (both separate words).
                guard !isSeparator(bytes[index]) else {
                    index += 1
                    continue
                }
                var end = index
                while end < bytes.count, !isSeparator(bytes[end]) { end += 1 }
                let word = UnsafeBufferPointer(rebasing: bytes[index..<end])
                if !out.isEmpty { out.append(0x20) }
                if word.contains(UInt8(ascii: "@")) {
                    out.append(contentsOf: "<address>".utf8)
                } else if contains(word, "://") || containsIgnoringCase(word, "oobcode") {
                    out.append(contentsOf: "<link>".utf8)
                } else if longestTokenRun(word) >= 24 {
                    out.append(contentsOf: "<token>".utf8)
                } else {
                    out.append(contentsOf: word)
                }
                index = end
            }
            if out.count > replyLimit {
                out.removeLast(out.count - (replyLimit - 1))
                out.append(contentsOf: "…".utf8)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// A space or a control byte: `cleanText` turns controls into spaces and splits on spaces.
    private static func isSeparator(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F }

    private static func contains(_ word: UnsafeBufferPointer<UInt8>, _ needle: StaticString) -> Bool {
        find(word, needle) { $0 }
    }

    private static func containsIgnoringCase(_ word: UnsafeBufferPointer<UInt8>, _ needle: StaticString) -> Bool {
        find(word, needle) { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }

    private static func find(_ word: UnsafeBufferPointer<UInt8>, _ needle: StaticString, _ fold: (UInt8) -> UInt8) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard word.count >= count else { return false }
        return needle.withUTF8Buffer { needle in
            (0...(word.count - count)).contains { start in (0..<count).allSatisfy { fold(word[start + $0]) == needle[$0] } }
        }
    }

    private static func longestTokenRun(_ word: UnsafeBufferPointer<UInt8>) -> Int {
        var run = 0
        var longest = 0
        for byte in word {
            let tokenish = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "=")
            run = tokenish ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// The reply code a reply starts with (`451 4.3.0 …` → 451); nil without one.
    /// Read on the bytes: by characters (grapheme breaks, Unicode digit properties) it was 0.7 % of
    /// the daemon's time in a drain.
    public static func replyCode(_ reply: String) -> Int? {
        let bytes = reply.utf8
        var code = 0
        for byte in bytes.prefix(3) {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        let next = bytes.dropFirst(3).first
        guard bytes.count >= 3, code >= 200, code < 600, next == nil || next == UInt8(ascii: " ") || next == UInt8(ascii: "-")
        else { return nil }
        return code
    }
}

/// What the outbox workers need to write the delivery log: the key and the transport's label.
public struct DeliveryLog: Sendable {
    public let key: DeliveryLogKey
    public let transport: String

    public init(key: DeliveryLogKey, transport: String) {
        self.key = key
        self.transport = transport
    }

    /// The log entry of one attempt of message `id` to `recipient`.
    public func attempt(
        id: Int64, recipient: EmailAddress, startedAt: Int64, milliseconds: Int64, outcome: DeliveryOutcome,
        action: DeliveryStateMachine.Action
    ) -> OutboxAttempt {
        let reply: String
        switch outcome {
        case .sent(let text), .permanent(let text), .transient(let text, _): reply = text
        }
        let result: OutboxAttempt.Outcome = switch action {
        case .markSent: .sent
        case .markDead: .failed
        default: .deferred
        }
        return OutboxAttempt(
            messageID: id, recipientHash: key.hash(recipient), attemptedAt: startedAt, durationMilliseconds: max(0, milliseconds),
            transport: transport, replyCode: DeliveryLogKey.replyCode(reply), reply: DeliveryLogKey.clean(reply), outcome: result)
    }
}
