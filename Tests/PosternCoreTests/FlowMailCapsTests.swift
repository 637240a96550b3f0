import Foundation
import PosternAPI
import PosternCore
import PosternTestSupport
import Testing

/// The caps on public mail (``MailCaps``) as a bot meets them through the flows: many addresses
/// at one domain, spellings of the domain, every public path that mails; and what stays open (the
/// admin API, another domain, the next hour).
@Suite("Mail caps per recipient domain and in all, through the flows")
struct FlowMailCapsTests {
    static func harness(domain: Int64 = 0, overrides: [String: Int64] = [:], total: Int64 = 0) throws -> FlowHarness {
        try FlowHarness { $0.mailCaps = MailCapConfiguration(domainPerHour: domain, domainOverrides: overrides, totalPerHour: total) }
    }

    /// Sends a sign-in link to `email`: nil when queued, else the error.
    static func send(_ h: FlowHarness, _ email: String) -> AuthError? {
        do { try h.service.emailLink.send(EmailLinkRequest(email: email)) } catch { return error }
        return nil
    }

    static func hits(_ h: FlowHarness, _ cap: String) -> Int? { h.service.mailCaps.snapshot().first { $0.cap == cap }?.count }

    @Test("attacker: 1,000 distinct addresses at one domain stop at its cap of 50; every refusal is one 429 with the seconds to the hour's end; another domain still gets mail")
    func distinctAddressesStopAtTheDomainCap() throws {
        let h = try Self.harness(domain: 50)
        // The clock starts on a window's edge (1_800_000_000 is a multiple of 3600): 100 s into it.
        h.clock.advance(by: 100)
        var refusals: Set<AuthError> = []
        for i in 0..<1_000 {
            if let error = Self.send(h, "user\(i)@example.org") { refusals.insert(error) }
        }
        #expect(h.store.queuedMail().count == 50)
        #expect(refusals == [.tooManyAttempts(retryAfter: 3_500)], "one answer for all 950")
        #expect(Self.hits(h, "domain") == 950 && Self.hits(h, "total") == 0)
        #expect(Self.send(h, "user1@example.net") == nil)
        #expect(h.store.queuedMail().count == 51)
    }

    @Test("attacker: upper-case, IDNA and googlemail spellings of gmail.com count as one domain")
    func spellingsOfTheDomainCountAsOne() throws {
        let h = try Self.harness(domain: 3)
        #expect(Self.send(h, "a@GMAIL.com") == nil)
        #expect(Self.send(h, "b@googlemail.com") == nil)
        #expect(Self.send(h, "c@Gmail.Com") == nil)
        #expect(Self.send(h, "d@gmail.com")?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(Self.send(h, "e@GoogleMail.COM")?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(h.store.queuedMail().count == 3)
        // An internationalized domain is counted on its A-labels, whichever form was typed.
        let idna = try Self.harness(domain: 1)
        #expect(Self.send(idna, "a@bücher.example") == nil)
        #expect(Self.send(idna, "b@xn--bcher-kva.example")?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
    }

    @Test("an override raises one domain's cap and another turns one off; the rest keep the default")
    func overridesRaiseAndTurnOff() throws {
        let h = try Self.harness(domain: 2, overrides: ["gmail.com": 10, "example.org": 0])
        for i in 0..<10 { #expect(Self.send(h, "g\(i)@googlemail.com") == nil) }
        #expect(Self.send(h, "g10@gmail.com") != nil)
        for i in 0..<100 { #expect(Self.send(h, "o\(i)@example.org") == nil) }
        #expect(Self.send(h, "n0@example.net") == nil && Self.send(h, "n1@example.net") == nil)
        #expect(Self.send(h, "n2@example.net") != nil)
        #expect(h.store.queuedMail().count == 112)
    }

    @Test("attacker: the total cap stops every domain; the next hour opens both caps again")
    func totalCapStopsEverything() throws {
        let h = try Self.harness(domain: 5, total: 8)
        for i in 0..<8 { #expect(Self.send(h, "u@d\(i).example") == nil) }
        #expect(Self.send(h, "u@d99.example") == .tooManyAttempts(retryAfter: 3_600))
        #expect(Self.send(h, "v@d0.example") == .tooManyAttempts(retryAfter: 3_600))
        #expect(Self.hits(h, "total") == 2)
        #expect(h.store.queuedMail().count == 8)
        h.clock.advance(by: 3_600)
        #expect(Self.send(h, "u@d99.example") == nil)
    }

    @Test("a refusal counts against nothing: the domain's count and the address's own allowance are rolled back with it (shown failing with the count kept)")
    func refusalCountsAgainstNothing() throws {
        let h = try FlowHarness {
            $0.mailPerHour = 2
            $0.mailCaps = MailCapConfiguration(domainPerHour: 1, totalPerHour: 1)
        }
        // 50 minutes into a cap's hour: the next hour opens the caps while the address's own
        // rolling hour still holds what it counted.
        h.clock.advance(by: 3_000)
        #expect(Self.send(h, "a@example.org") == nil)
        // Refused by the total cap: neither example.net's count nor b@'s own allowance moved.
        for _ in 0..<5 { #expect(Self.send(h, "b@example.net") == .tooManyAttempts(retryAfter: 600)) }
        h.clock.advance(by: 600)
        #expect(Self.send(h, "b@example.net") == nil, "b@ still has its 2 an hour")
        #expect(Self.send(h, "c@example.net") == .tooManyAttempts(retryAfter: 3_600), "example.net counted one: b@'s")
    }

    @Test("every public path that mails is capped: sign-up, reset, verification and change of address; nothing is queued past the cap")
    func everyPublicPathIsCapped() throws {
        let h = try Self.harness(domain: 3)
        let account = try h.signIn("owner@example.org")
        _ = try h.signIn("owner2@example.org")
        _ = try h.signIn("owner3@example.org")
        let queued = h.store.queuedMail().count
        let capped = "TOO_MANY_ATTEMPTS_TRY_LATER"
        expectAuthError(capped) {
            try h.service.passwords.signUp(email: "new@example.org", password: "correct horse battery", idToken: nil, continueURL: nil, locale: nil)
        }
        expectAuthError(capped) { try h.service.passwords.requestReset(email: "owner@example.org", continueURL: nil, locale: nil) }
        expectAuthError(capped) { try h.service.addresses.requestVerification(idToken: account.session.idToken, continueURL: nil) }
        expectAuthError(capped) {
            try h.service.addresses.requestChange(idToken: account.session.idToken, newEmail: "moved@example.org", continueURL: nil)
        }
        #expect(h.store.queuedMail().count == queued)
    }

    @Test("no oracle: past the cap an address with an account and one without get the same error, the same Retry-After")
    func sameAnswerWithOrWithoutAccount() throws {
        let h = try Self.harness(domain: 1)
        _ = try h.signIn("owner@example.org")
        var answers: [AuthError] = []
        for email in ["owner@example.org", "nobody@example.org"] {
            do { try h.service.passwords.requestReset(email: email, continueURL: nil, locale: nil) } catch { answers.append(error) }
            if let error = Self.send(h, email) { answers.append(error) }
        }
        #expect(answers.count == 4 && Set(answers).count == 1)
    }

    @Test("the admin API's mail is neither refused nor counted: it sends past both caps, and the public caps stay as they were")
    func adminMailPassesTheCaps() throws {
        let h = try Self.harness(domain: 1, total: 1)
        #expect(Self.send(h, "a@example.org") == nil)
        #expect(Self.send(h, "b@example.org") != nil)
        for i in 0..<5 {
            let issued = try h.service.operators.issueLink(action: "sign-in", email: "c\(i)@example.org", continueURL: nil, locale: nil, queue: true)
            #expect(issued.queued && issued.messageID != nil)
        }
        #expect(h.store.queuedMail().count == 6)
        #expect(Self.hits(h, "domain") == 1)
    }
}

/// `--mail-domain-per-hour`: one setting with per-domain overrides, its errors naming the part.
@Suite("The mail caps' settings")
struct MailCapSettingsTests {
    @Test("N,domain=M,…: the default and each override, domains in A-labels, googlemail.com read as gmail.com")
    func parsesOverrides() throws {
        let parsed = try MailCapConfiguration.parseDomainCaps("600, GoogleMail.com=5000 ,bücher.example=0")
        #expect(parsed.perHour == 600)
        #expect(parsed.overrides == ["gmail.com": 5000, "xn--bcher-kva.example": 0])
        #expect(try MailCapConfiguration.parseDomainCaps("0").perHour == 0)
    }

    @Test("a malformed value is refused with the part that is wrong")
    func errorsNameThePart() {
        for (value, part) in [
            ("600,gmail.com=lots", "gmail.com=lots"), ("600,gmail.com", "gmail.com"), ("many", "many"),
            ("600,=5", "=5"), ("600,bad domain=5", "bad domain"), ("600,gmail.com=1,googlemail.com=2", "googlemail.com=2"),
            ("-1", "-1"),
        ] {
            do {
                _ = try MailCapConfiguration.parseDomainCaps(value)
                Issue.record("\(value) was accepted")
            } catch {
                #expect(error.message.contains(part), "\(value): \(error.message)")
            }
        }
        #expect(throws: SettingsError.self) { try MailCapConfiguration.parseDomainCaps("gmail.com=5") }
    }

    @Test("the settings' defaults: 600 a domain, 5000 in all; the flag and the environment reach the flows' configuration")
    func defaultsAndFlags() throws {
        #expect(AuthConfiguration(Settings()).mailCaps == MailCapConfiguration(domainPerHour: 600, totalPerHour: 5_000))
        let s = try Settings.resolve(
            flags: ["mail-domain-per-hour": "100,gmail.com=2000"], environment: ["POSTERN_MAIL_PER_HOUR_TOTAL": "0"], file: [:])
        #expect(AuthConfiguration(s).mailCaps == MailCapConfiguration(domainPerHour: 100, domainOverrides: ["gmail.com": 2000], totalPerHour: 0))
        let error = #expect(throws: SettingsError.self) {
            try Settings.resolve(flags: ["mail-domain-per-hour": "600,gmail.com=x"], environment: [:], file: [:])
        }
        #expect(error?.message.contains("--mail-domain-per-hour") == true && error?.message.contains("gmail.com=x") == true)
    }
}
