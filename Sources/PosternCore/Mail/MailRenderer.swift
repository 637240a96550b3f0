import Foundation

/// Renders mails from a checked ``TemplateSet``; rendering cannot fail.
///
/// Made only by ``TemplateSet/renderer(branding:)``, which refuses a set with problems, so every
/// kind has templates in the fallback locale and every template compiled.
public struct MailRenderer: Sendable {
    /// The installation-wide values (`appName`, `supportEmail`).
    public let branding: Branding
    private let kindsByLocale: [String: [MailMessageKind: KindTemplates]]
    private let fallback: KindTable
    /// The words of each locale that are not templates (units of time).
    private let words: MailWords

    init(branding: Branding, kindsByLocale: [String: [MailMessageKind: KindTemplates]], fallback: KindTable, words: MailWords) {
        self.words = words
        self.branding = branding
        self.kindsByLocale = kindsByLocale
        self.fallback = fallback
    }

    /// The locales that have templates, sorted.
    public var locales: [String] { kindsByLocale.keys.sorted() }

    /// The locale a mail of `kind` is written in, given preferences most wanted first (the
    /// request's locale, then the account's); `en` when none of them has the kind.
    public func locale(for kind: MailMessageKind, preferences: [String?]) -> String {
        MailLocale.candidates(preferences).first { kindsByLocale[$0]?[kind] != nil } ?? MailLocale.fallback
    }

    /// `message` rendered in the first of `preferences` that has its kind (else `en`).
    ///
    /// - Parameter now: the time of rendering, from which "valid for 10 minutes" is computed.
    public func render(_ message: MailMessage, preferences: [String?], now: Date) -> RenderedMail {
        let locale = locale(for: message.kind, preferences: preferences)
        let templates = kindsByLocale[locale]?[message.kind] ?? fallback[message.kind]
        let context = context(for: message, locale: locale, now: now)
        return RenderedMail(
            kind: message.kind, locale: locale,
            subject: templates.subject.render(context),
            text: templates.text.render(context),
            html: templates.html.render(context))
    }

    /// The values `message` is rendered with in `locale` at `now`.
    public func context(for message: MailMessage, locale: String, now: Date) -> TemplateContext<MailVariable> {
        var context = TemplateContext<MailVariable>()
        context[.appName] = branding.appName
        context[.supportEmail] = branding.supportEmail
        context[.email] = message.recipient.address
        context[.displayName] = message.displayName
        let requested = UTCDateTime(message.requestedAt)
        context[.requestedAt] = requested.clockText
        context[.requestedDate] = requested.dateText
        if let expiresAt = message.content.expiresAt {
            let left = expiresAt.timeIntervalSince(now)
            context[.expiresIn] = ValidityText.text(seconds: left, locale: locale, words: words)
            context[.expiresInMinutes] = String(ValidityText.wholeMinutes(left))
        }
        message.content.fill(&context)
        return context
    }
}

/// A rendered mail: the subject line and both bodies, before MIME encoding.
public struct RenderedMail: Sendable, Hashable {
    /// The kind of mail.
    public let kind: MailMessageKind
    /// The locale whose templates were used, e.g. `de`.
    public let locale: String
    /// The subject, one line, without control characters.
    public let subject: String
    /// The text/plain body, with `\n` line ends.
    public let text: String
    /// The text/html body, with `\n` line ends.
    public let html: String
}

extension MailMessage {
    /// A message of `kind` with example values (example.com addresses, a made-up link and code),
    /// for `postern templates render` and for checking that every template renders.
    public static func sample(of kind: MailMessageKind, now: Date, publicURL: String = "https://auth.example.com") -> MailMessage {
        let user = EmailAddress(checkedLocalPart: "jane.doe", domain: "example.com")
        let old = EmailAddress(checkedLocalPart: "jane", domain: "old.example.com")
        let mode = kind.action?.rawValue ?? EmailAction.signIn.rawValue
        let link = "\(publicURL)/action?mode=\(mode)&oobCode=SAMPLE-not-a-real-code_0123456789abcdefghij&lang=en"
        let resetLink = "\(publicURL)/action?mode=resetPassword&oobCode=SAMPLE-reset-code_0123456789"
        let expires = now.addingTimeInterval(kind == .resetPassword ? 3_600 : kind == .signIn ? 600 : 259_200)
        let content: MailContent =
            switch kind {
            case .signIn: .signIn(link: link, code: "123456", expiresAt: expires)
            case .confirmSignUp: .confirmSignUp(link: link, expiresAt: expires)
            case .accountAlreadyExists: .accountAlreadyExists(signInLink: link, expiresAt: expires, resetLink: resetLink)
            case .resetPassword: .resetPassword(link: link, expiresAt: expires)
            case .passwordChanged: .passwordChanged(resetLink: resetLink)
            case .verifyEmail: .verifyEmail(link: link, expiresAt: expires)
            case .verifyAndChangeEmail: .verifyAndChangeEmail(link: link, expiresAt: expires, oldEmail: old, newEmail: user)
            case .recoverEmail: .recoverEmail(link: link, expiresAt: expires, oldEmail: old, newEmail: user)
            case .noAccount: .noAccount(signUpLink: "\(publicURL)/")
            case .signInApproved: .signInApproved(device: "Chrome on Linux")
            case .phoneTransferRequested: .phoneTransferRequested(phoneNumber: "+49…", movesAt: now.addingTimeInterval(7 * 86_400))
            case .newSignIn: .newSignIn(device: "Safari on iPhone (203.0.113.0/24)")
            }
        let recipient = kind == .recoverEmail ? old : user
        return MailMessage(content: content, recipient: recipient, requestedAt: now, displayName: "Jane Doe")
    }
}
