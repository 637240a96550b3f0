import Foundation
import PosternCore
import Testing

/// A bot re-spelling one mailbox to get a fresh per-address allowance each time: every limit and
/// budget counts on the canonical address, while mail still goes to the address as typed.
@Suite("Attack: spellings of one mailbox (canonical addresses)")
struct FlowCanonicalAddressTests {
    /// `count` distinct spellings of adalovelace@gmail.com: each a different placement of dots
    /// (the 10 gaps of "adalovelace" give 1,024), every third with a +tag, every other at
    /// googlemail.com, every fifth in upper case.
    static func gmailVariants(_ count: Int) -> [String] {
        let name = Array("adalovelace")
        return (0..<count).map { i in
            var local = ""
            for (index, letter) in name.enumerated() {
                local.append(letter)
                if index < name.count - 1, (i >> index) & 1 == 1 { local.append(".") }
            }
            if i % 5 == 0 { local = local.uppercased() }
            if i % 3 == 1 { local += "+bot\(i)" }
            return local + (i % 2 == 1 ? "@googlemail.com" : "@gmail.com")
        }
    }

    static let allowance: Int64 = 3

    func harness() throws -> FlowHarness { try FlowHarness { $0.mailPerHour = Self.allowance } }

    /// Runs `ask` for every variant; the number it let through. Every refusal must be the limit's.
    func send(_ variants: [String], _ ask: (String) throws -> Void) -> Int {
        var accepted = 0
        for variant in variants {
            do {
                try ask(variant)
                accepted += 1
            } catch let error as AuthError {
                #expect(error.code == "TOO_MANY_ATTEMPTS_TRY_LATER", "\(variant): \(error)")
            } catch {
                Issue.record("\(variant): \(error)")
            }
        }
        return accepted
    }

    @Test("the generator makes 1,000 addresses that are distinct as account addresses")
    func generatorIsDistinct() throws {
        let variants = Self.gmailVariants(1000)
        let normalized = Set(try variants.map { try EmailAddress.parse($0).normalized })
        #expect(normalized.count == 1000)
        #expect(variants.contains { $0.contains("+") } && variants.contains { $0.hasSuffix("@googlemail.com") })
    }

    @Test("1,000 Gmail spellings of one mailbox get sign-in links up to its allowance, each to the address as typed")
    func signInLinks() throws {
        let h = try harness()
        let variants = Self.gmailVariants(1000)
        let accepted = send(variants) { try h.service.emailLink.send(EmailLinkRequest(email: $0)) }
        #expect(accepted == Int(Self.allowance))
        let queued = h.store.queuedMail()
        #expect(queued.count == Int(Self.allowance))
        // The recipient is the spelling that was typed (local part as given), not the canonical one.
        let typed = try variants.prefix(Int(Self.allowance)).map { try EmailAddress.parse($0).address }
        #expect(queued.map(\.recipient.address) == typed)
        #expect(typed.contains { $0 != "adalovelace@gmail.com" })
    }

    @Test("1,000 Gmail spellings of one mailbox get sign-up mail up to its allowance")
    func signUps() throws {
        let h = try harness()
        let accepted = send(Self.gmailVariants(1000)) {
            try h.service.passwords.signUp(email: $0, password: "a long enough password", idToken: nil, continueURL: nil, locale: nil)
        }
        #expect(accepted == Int(Self.allowance))
        #expect(h.store.queuedMail().count == Int(Self.allowance))
    }

    @Test("1,000 Gmail spellings of one mailbox get reset mail up to its allowance")
    func resets() throws {
        let h = try harness()
        try h.signUp("adalovelace@gmail.com", password: "a long enough password")
        let before = h.store.queuedMail().count
        let accepted = send(Self.gmailVariants(1000)) {
            try h.service.passwords.requestReset(email: $0, continueURL: nil, locale: nil)
        }
        #expect(accepted == Int(Self.allowance))
        #expect(h.store.queuedMail().count - before == Int(Self.allowance))
    }

    @Test("a change of address to spellings of one new mailbox is limited as one address")
    func changeOfAddress() throws {
        let h = try harness()
        let session = try h.signIn("owner@example.com")
        let accepted = send(Self.gmailVariants(20)) {
            try h.service.addresses.requestChange(idToken: session.session.idToken, newEmail: $0, continueURL: nil)
        }
        #expect(accepted == Int(Self.allowance))
    }

    @Test("the +tags of a domain not listed, and the dots at outlook.com, are separate allowances")
    func unlistedSpellingsStayApart() throws {
        let h = try FlowHarness { $0.mailPerHour = 1 }
        for address in ["ada@example.com", "ada+1@example.com", "ada+2@example.com", "a.da@outlook.com", "ada@outlook.com"] {
            try h.service.emailLink.send(EmailLinkRequest(email: address))
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") { try h.service.emailLink.send(EmailLinkRequest(email: "ada+3@outlook.com")) }
    }

    @Test("one spelling's wrong 6-digit codes lock every spelling's, and a link completed at another clears the lock")
    func sixDigitBudgetIsShared() throws {
        let h = try FlowHarness()
        let victim = "ada.lovelace@gmail.com"
        try h.service.emailLink.send(EmailLinkRequest(email: victim))
        let code = try h.lastCode()
        let wrong = code == "000000" ? "111111" : "000000"
        // Each wrong guess at another spelling, as a bot would spread them.
        for variant in Self.gmailVariants(5) {
            expectAuthError("INVALID_OOB_CODE") {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(code: wrong, email: variant))
            }
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: wrong, email: "a.d.a.l.o.v.e.l.a.c.e+x@googlemail.com"))
        }
        // The victim's own spelling is locked too, the right code included.
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.emailLink.complete(EmailLinkCompletion(code: code, email: victim))
        }
        // The link proves the mailbox: the budget counted under the canonical key is cleared under it.
        _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
        try h.service.emailLink.send(EmailLinkRequest(email: "AdaLovelace+later@googlemail.com"))
        _ = try h.service.emailLink.complete(EmailLinkCompletion(code: try h.lastCode(), email: "AdaLovelace+later@googlemail.com"))
    }

    @Test("wrong passwords at one spelling lock the password budget of every spelling")
    func passwordBudgetIsShared() throws {
        let h = try FlowHarness()
        try h.signUp("ada.lovelace@gmail.com", password: "the right password")
        for variant in Self.gmailVariants(5) {
            expectAuthError("INVALID_LOGIN_CREDENTIALS") {
                _ = try h.service.passwords.signIn(email: variant, password: "a wrong guess", idToken: nil, allowMigration: false)
            }
        }
        expectAuthError("TOO_MANY_ATTEMPTS_TRY_LATER") {
            _ = try h.service.passwords.signIn(email: "ada.lovelace@gmail.com", password: "the right password", idToken: nil, allowMigration: false)
        }
    }

    @Test("the account's address is the spelling that signed up, and a second spelling is a second account address")
    func accountKeepsTypedAddress() throws {
        let h = try FlowHarness()
        let first = try h.signIn("A.Da+Work@GoogleMail.com")
        #expect(first.email == "A.Da+Work@googlemail.com")
        #expect(try h.account(first.uid)?.email?.address == "A.Da+Work@googlemail.com")
        // Accounts are still keyed by the normalized address: counting merges spellings, accounts do not.
        let second = try h.signIn("ada@gmail.com")
        #expect(second.uid != first.uid && second.email == "ada@gmail.com")
    }
}
