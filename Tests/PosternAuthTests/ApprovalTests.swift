import Foundation
import PosternAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import PosternAuth

/// A browser on "the other device", spoken to with plain HTTP: keeps the page's CSRF cookie and
/// submits its forms as a person pressing the buttons would.
struct OtherDevice {
    let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return URLSession(configuration: configuration)
    }()
    var cookie: String?

    /// GETs `url`; keeps the cookie the page sets.
    mutating func open(_ url: String) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: url)!)
        if let cookie { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        if let set = http.value(forHTTPHeaderField: "Set-Cookie"), let pair = set.split(separator: ";").first { cookie = String(pair) }
        return (http.statusCode, String(decoding: data, as: UTF8.self))
    }

    /// POSTs the form around the button `buttonID` on `page` to `base`/action, with `typed` written
    /// into the form's fields of those names (each must be on the form).
    func press(_ buttonID: String, on page: String, base: URL, typing typed: [String: String] = [:]) async throws -> (Int, String) {
        let button = try #require(page.range(of: "id=\"\(buttonID)\""), "no button \(buttonID) on the page")
        let formStart = try #require(page[..<button.lowerBound].range(of: "<form", options: .backwards))
        let form = String(page[formStart.lowerBound..<button.lowerBound])
        let pattern = try NSRegularExpression(pattern: #"<input type="hidden" name="([^"]+)" value="([^"]*)">"#)
        var fields: [String] = []
        for match in pattern.matches(in: form, range: NSRange(form.startIndex..., in: form)) {
            let name = String(form[Range(match.range(at: 1), in: form)!])
            let value = String(form[Range(match.range(at: 2), in: form)!]).replacingOccurrences(of: "&amp;", with: "&")
            fields.append("\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        }
        for (name, value) in typed {
            #expect(form.contains("<input type=\"text\" name=\"\(name)\""), "no field \(name) on the form")
            fields.append("\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        }
        var request = URLRequest(url: base.appendingPathComponent("action"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        if let cookie { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        request.httpBody = Data(fields.joined(separator: "&").utf8)
        let (data, response) = try await session.data(for: request)
        return ((response as! HTTPURLResponse).statusCode, String(decoding: data, as: UTF8.self))
    }
}

/// Whether the page asks for the approval's number (the field the owner types it into).
func asksForNumber(_ page: String) -> Bool { page.contains("id=\"pick\"") }

/// Whether the page offers the number `number` to tap or gives it away in a field: it must not,
/// or the owner's "approval" is a guess (one in three, when the page offered three).
func offers(_ number: Int, _ page: String) -> Bool {
    page.contains("id=\"pick-") || page.contains("value=\"\(number)\"")
}

/// The action link in a mail's text part (quoted-printable undone).
func actionLink(_ mail: String, base: URL) throws -> String {
    let text = mail.replacingOccurrences(of: "=\r\n", with: "").replacingOccurrences(of: "=3D", with: "=")
    let pattern = try NSRegularExpression(pattern: NSRegularExpression.escapedPattern(for: base.absoluteString) + #"/action\?[^\s<>"]+"#)
    let match = try #require(pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)))
    return String(text[Range(match.range, in: text)!])
}

@Suite("approve on your other device, against a real server")
struct ApprovalTests {
    @Test("the asking device waits; GETs (a scanner's) change nothing; the right number gives the session to the asking device only")
    func approve() async throws {
        let server = try await LiveServer()
        let asking = server.device()
        let pending = try await asking.requestApproval(for: "approve@example.org", deviceName: "Ada's laptop")
        #expect((10...99).contains(pending.number))
        let waiting = Task { try await asking.waitForApproval(pending) }

        let mail = try await server.mail(to: "approve@example.org")
        let link = try actionLink(mail, base: server.url)
        var browser = OtherDevice()
        // A scanner fetches the link again and again: it sees the review button, never the numbers.
        for _ in 0..<3 {
            let (status, page) = try await browser.open(link)
            #expect(status == 200)
            #expect(page.contains("id=\"review\""))
            #expect(!asksForNumber(page) && !page.contains("Ada&#39;s laptop") && !page.contains("Ada's laptop"))
        }
        // The person presses the button: the device's name, and a field for the number it shows.
        let review = try await browser.open(link).1
        let (_, choice) = try await browser.press("review", on: review, base: server.url)
        #expect(choice.contains("Ada"), "the page names the asking device")
        #expect(choice.contains("a•••@example.org") || choice.contains("a&#8226;&#8226;&#8226;@example.org"))
        #expect(asksForNumber(choice) && !offers(pending.number, choice), "the page asks for the number and shows none")

        let (status, done) = try await browser.press("approve", on: choice, base: server.url, typing: ["pick": "\(pending.number)"])
        #expect(status == 200 && done.contains("id=\"approval\""))
        #expect(!done.contains("idToken") && !done.contains("eyJ"), "the browser gets no session")
        let login = try await waiting.value
        #expect(login.isNewUser && login.email == "approve@example.org")
        #expect(asking.user?.email == "approve@example.org")
        // The owner is told, naming the device.
        let notice = try await server.mail(to: "approve@example.org", number: 2)
        #expect(notice.contains("approved") && notice.contains("Ada"))
        // Used up: the page and the wait refuse it now.
        let (_, again) = try await browser.press("approve", on: choice, base: server.url, typing: ["pick": "\(pending.number)"])
        #expect(!again.contains("id=\"approval\""))
    }

    @Test("a wrong number cancels the request: the waiting device hears invalidCode and the right number no longer works")
    func wrongPick() async throws {
        // One delivery worker: mail goes out in the order it was queued (the fence below).
        let server = try await LiveServer(["--workers", "1"])
        let asking = server.device()
        let pending = try await asking.requestApproval(for: "wrong@example.org")
        let waiting = Task { try await asking.waitForApproval(pending) }
        let link = try actionLink(try await server.mail(to: "wrong@example.org"), base: server.url)
        var browser = OtherDevice()
        let review = try await browser.open(link).1
        let (_, choice) = try await browser.press("review", on: review, base: server.url)
        let wrong = pending.number == 10 ? 11 : pending.number - 1
        let (_, cancelled) = try await browser.press("approve", on: choice, base: server.url, typing: ["pick": "\(wrong)"])
        #expect(cancelled.contains("id=\"approval\""))
        await #expect(throws: PosternAuthError.invalidCode) { try await waiting.value }
        #expect(asking.user == nil)
        let (_, late) = try await browser.press("approve", on: choice, base: server.url, typing: ["pick": "\(pending.number)"])
        #expect(!late.contains("id=\"device\""), "the right number after a wrong one approves nothing")
        // No notice: nothing was approved. A sign-in link asked for now is queued after any
        // notice the presses queued, and one worker sends in that order: once a second mail is
        // there, a notice would be too.
        try await asking.sendSignInLink(to: "wrong@example.org")
        _ = try await server.mail(to: "wrong@example.org", number: 2)
        let mails = server.mails(to: "wrong@example.org")
        #expect(mails.count == 2 && !mails.contains { $0.contains("approved") }, "\(mails.count) mails")
    }

    @Test("the 6-digit code of the same mail is the fallback on the asking device; 'I did not ask for this' changes nothing")
    func cancelAndFallback() async throws {
        let server = try await LiveServer()
        let asking = server.device()
        let pending = try await asking.requestApproval(for: "fallback@example.org")
        let mail = try await server.mail(to: "fallback@example.org")
        // The code works while the approval waits.
        let login = try await asking.login(with: .emailCode(email: "fallback@example.org", code: try LiveServer.sixDigits(mail)))
        #expect(login.email == "fallback@example.org")
        // The request is used: the page cannot approve it any more.
        var browser = OtherDevice()
        let (status, page) = try await browser.open(try actionLink(mail, base: server.url))
        #expect(status == 400 && !page.contains("id=\"review\""))
        await #expect(throws: PosternAuthError.invalidCode) { try await asking.waitForApproval(pending) }

        // A second request: "I did not ask for this" (which a scanner presses too) changes
        // nothing: the asking device still waits, and the right number still approves it.
        let secondDevice = server.device()
        let second = try await secondDevice.requestApproval(for: "fallback@example.org")
        let secondLink = try actionLink(try await server.mail(to: "fallback@example.org", number: 2), base: server.url)
        let review = try await browser.open(secondLink).1
        let (_, choice) = try await browser.press("review", on: review, base: server.url)
        let (_, declined) = try await browser.press("cancel", on: choice, base: server.url)
        #expect(declined.contains("id=\"approval\"") && !declined.contains("id=\"device\""))
        let waiting = Task { try await secondDevice.waitForApproval(second) }
        let (_, approved) = try await browser.press("approve", on: choice, base: server.url, typing: ["pick": "\(second.number)"])
        #expect(approved.contains("id=\"approval\"") && approved.contains("id=\"device\""), "declining changed something")
        #expect(try await waiting.value.email == "fallback@example.org")
    }

    @Test("only the verifier's holder can wait: another device's wait, or a forged verifier, learns nothing")
    func waitNeedsTheSecret() async throws {
        let server = try await LiveServer()
        let asking = server.device()
        _ = try await asking.requestApproval(for: "secret@example.org")
        var request = URLRequest(url: server.url.appendingPathComponent("v1/email-link/wait"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"email":"secret@example.org","codeVerifier":"not-the-verifier-aaaaaaaaaaaaaaaaaaaaaaaaaaaa","waitSeconds":0}"#.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 400)
        #expect(String(decoding: data, as: UTF8.self).contains("INVALID_OOB_CODE"))
        // waitSeconds is bounded.
        request.httpBody = Data(#"{"email":"secret@example.org","codeVerifier":"x","waitSeconds":26}"#.utf8)
        let (_, bounded) = try await URLSession.shared.data(for: request)
        #expect((bounded as? HTTPURLResponse)?.statusCode == 400)
        // An approval without PKCE is refused.
        var plain = URLRequest(url: server.url.appendingPathComponent("v1/email-link/send"))
        plain.httpMethod = "POST"
        plain.setValue("application/json", forHTTPHeaderField: "Content-Type")
        plain.httpBody = Data(#"{"email":"secret@example.org","approval":true}"#.utf8)
        let (_, refused) = try await URLSession.shared.data(for: plain)
        #expect((refused as? HTTPURLResponse)?.statusCode == 400)
    }
}
