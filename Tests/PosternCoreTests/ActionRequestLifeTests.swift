import PosternCore
import Testing

@Suite("A request's life")
struct ActionRequestLifeTests {
    let address = (try? EmailAddress.parse("a@example.com"))!

    func request(sixDigit: Bool = true) -> ActionRequest {
        ActionRequest(
            id: "r1", purpose: .signIn, email: address, createdAt: 1000, expiresAt: 1600, sixDigitKeyID: sixDigit ? 7 : nil)
    }

    @Test("open until it expires; used once consumed; consuming twice or late changes nothing")
    func phases() {
        var life = ActionRequestLife(request())
        #expect(life.phase(now: 1000) == .open)
        #expect(life.phase(now: 1599) == .open)
        #expect(life.phase(now: 1600) == .expired)
        let late = life.consume(at: 1600)
        #expect(!late)
        #expect(life.request.consumedAt == nil)
        let first = life.consume(at: 1200)
        #expect(first)
        #expect(life.phase(now: 1300) == .used)
        let second = life.consume(at: 1300)
        #expect(!second)
        #expect(life.request.consumedAt == 1200)
    }

    @Test("the 6-digit code takes maximumWrongTries wrong tries, then is refused; a request without one never accepts")
    func sixDigitTries() {
        var life = ActionRequestLife(request(), maximumWrongTries: 3)
        for _ in 0..<3 {
            #expect(life.acceptsSixDigitCode(now: 1100))
            life.wrongSixDigitCode()
        }
        #expect(!life.acceptsSixDigitCode(now: 1100))
        #expect(life.request.wrongTries == 3)
        #expect(life.isOpen(now: 1100), "the link still works")
        var plain = ActionRequestLife(request(sixDigit: false))
        #expect(!plain.acceptsSixDigitCode(now: 1100))
        plain.wrongSixDigitCode()
        #expect(plain.request.wrongTries == 0)
        var used = ActionRequestLife(request())
        used.consume(at: 1100)
        #expect(!used.acceptsSixDigitCode(now: 1100))
        #expect(!ActionRequestLife(request()).acceptsSixDigitCode(now: 1600))
    }
}
