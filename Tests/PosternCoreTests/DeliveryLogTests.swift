@testable import PosternCore
import PosternCrypto
import Testing

@Suite("The delivery log's cleaning of replies and its reply codes")
struct DeliveryLogTests {
    @Test("the ASCII fast path cleans exactly as the general one: 20,000 random replies of words, addresses, links, tokens and controls")
    func asciiPathAgreesWithTheGeneralOne() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["250", "2.0.0", "Ok:", "queued", "as", " ", "  ", "\t", "\r\n", "\u{7F}", "\u{01}", "@", "ann@example.com",
                      "://", "https://x.example/a?oobCode=1", "OOBCODE", "oObCoDe", "AbCdEfGhIjKlMnOpQrStUvWx", "a-b_c+d/e=f",
                      String(repeating: "Z", count: 23), String(repeating: "k", count: 24), "=", "<", ">", "…" /* not ASCII: general path */]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let reply = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: Bool.random(using: &generator) ? " " : "")
            let ascii = DeliveryLogKey.cleanASCII(reply)
            if reply.utf8.allSatisfy({ $0 < 0x80 }) {
                #expect(ascii == DeliveryLogKey.cleanText(reply), "\(reply.debugDescription)")
            } else {
                #expect(ascii == nil)
            }
            #expect(DeliveryLogKey.clean(reply) == DeliveryLogKey.cleanText(reply))
        }
    }

    @Test("addresses, links and long tokens are replaced; control characters flattened; length capped")
    func clean() {
        #expect(DeliveryLogKey.clean("550 5.1.1 <ann@example.com>: Recipient address rejected") == "550 5.1.1 <address> Recipient address rejected")
        #expect(DeliveryLogKey.clean("554 rejected https://auth.example/action?mode=signIn&oobCode=abc") == "554 rejected <link>")
        #expect(DeliveryLogKey.clean("554 content oobCode=Zm9vYmFy") == "554 content <link>")
        #expect(DeliveryLogKey.clean("451 id AbCdEfGhIjKlMnOpQrStUvWxYz012345 later") == "451 id <token> later")
        #expect(DeliveryLogKey.clean("451 4.3.0 queue 2026-12-01") == "451 4.3.0 queue 2026-12-01")
        #expect(DeliveryLogKey.clean("250 ok\r\nX-Injected: yes") == "250 ok X-Injected: yes")
        let long = DeliveryLogKey.clean("451 " + String(repeating: "word ", count: 200))
        #expect(long.count == DeliveryLogKey.replyLimit && long.hasSuffix("…"))
    }

    @Test("a reply code is three digits 200–599 at the start, then a space, a dash or nothing")
    func codes() {
        #expect(DeliveryLogKey.replyCode("451 4.3.0 try again") == 451)
        #expect(DeliveryLogKey.replyCode("250-PIPELINING") == 250)
        #expect(DeliveryLogKey.replyCode("550") == 550)
        #expect(DeliveryLogKey.replyCode("curl error 7: no connection") == nil)
        #expect(DeliveryLogKey.replyCode("4510 nope") == nil)
        #expect(DeliveryLogKey.replyCode("199 low") == nil)
        #expect(DeliveryLogKey.replyCode("") == nil)
        #expect(DeliveryLogKey.replyCode("25") == nil)
        #expect(DeliveryLogKey.replyCode("250x") == nil)
        #expect(DeliveryLogKey.replyCode("600 above") == nil)
        #expect(DeliveryLogKey.replyCode("\u{0662}\u{0665}\u{0660} other digits") == nil)
    }

    @Test("an attempt's entry names the outcome the state machine chose, never the address")
    func entry() throws {
        let log = DeliveryLog(key: try DeliveryLogKey(box: try SecretBox(key: Array(repeating: 1, count: 32))), transport: "smtp://m:25")
        let ann = try EmailAddress.parse("ann@example.com")
        let deferred = log.attempt(
            id: 7, recipient: ann, startedAt: 100, milliseconds: 42, outcome: .transient(reply: "451 busy", connectionFailed: false),
            action: .retry(at: 130, reply: "451 busy"))
        #expect(deferred.outcome == .deferred && deferred.replyCode == 451 && deferred.durationMilliseconds == 42)
        let failed = log.attempt(
            id: 7, recipient: ann, startedAt: 100, milliseconds: 1, outcome: .permanent(reply: "550 <ann@example.com> unknown"),
            action: .markDead(reply: "550", suppress: true))
        #expect(failed.outcome == .failed && failed.reply == "550 <address> unknown" && !failed.reply.contains("ann"))
        #expect(failed.recipientHash == deferred.recipientHash && failed.recipientHash.count == 16)
    }
}
