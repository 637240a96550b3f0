/// The words of a locale that are not whole templates, read from files beside the templates so a
/// language is added by adding files, never by editing Swift: the units a mail says how long a
/// link lasts in ("10 minutes", "3 Tage") from `LOCALE/words.strings`, and the hosted page's
/// words from `LOCALE/page.strings` (``PageWord``).
///
/// The file has one `key = value` line per word; blank lines and lines starting with `#` are
/// skipped. `en` must have every word; another locale may leave words out (they fall back to
/// `en`'s). An unknown key or a line without `=` is a problem for `templates check`.
public enum MailWord: String, Sendable, Hashable, CaseIterable {
    case minuteOne = "minute.one"
    case minuteOther = "minute.other"
    case hourOne = "hour.one"
    case hourOther = "hour.other"
    case dayOne = "day.one"
    case dayOther = "day.other"
}

/// The words the hosted pages say (the action page's and the OpenID Connect provider's), from
/// `LOCALE/page.strings` (the same format as `words.strings`); `%@` in a value stands for the
/// address or the client's name the page fills in. The page's
/// title is the app name (`--app-name`) and its heading.
public enum PageWord: String, Sendable, Hashable, CaseIterable {
    case signInHeading = "signIn.heading"
    case signInContinue = "signIn.continue"
    case signInNoContinue = "signIn.noContinue"
    case signInCode = "signIn.code"
    case resetHeading = "reset.heading"
    case resetLabel = "reset.label"
    case resetSubmit = "reset.submit"
    case resetDone = "reset.done"
    case verifyEmailHeading = "verifyEmail.heading"
    case verifyEmailBody = "verifyEmail.body"
    case verifyEmailSubmit = "verifyEmail.submit"
    case verifyEmailDone = "verifyEmail.done"
    case verifyAndChangeEmailHeading = "verifyAndChangeEmail.heading"
    case verifyAndChangeEmailBody = "verifyAndChangeEmail.body"
    case verifyAndChangeEmailSubmit = "verifyAndChangeEmail.submit"
    case verifyAndChangeEmailDone = "verifyAndChangeEmail.done"
    case recoverEmailHeading = "recoverEmail.heading"
    case recoverEmailBody = "recoverEmail.body"
    case recoverEmailSubmit = "recoverEmail.submit"
    case recoverEmailDone = "recoverEmail.done"
    case confirmType = "confirm.type"
    case confirmWrong = "confirm.wrong"
    case doneHeading = "done.heading"
    case back
    case errorHeading = "error.heading"
    case errorExpired = "error.expired"
    case errorInvalid = "error.invalid"
    case errorUsed = "error.used"
    case errorSuperseded = "error.superseded"
    case errorOtherBrowser = "error.otherBrowser"
    case signedInHeading = "signedIn.heading"
    case signedInDone = "signedIn.done"
    case errorForm = "error.form"
    case errorWeakTooShort = "error.weak.tooShort"
    case errorWeakTooLong = "error.weak.tooLong"
    case errorWeakIsTheAddress = "error.weak.isTheAddress"
    case errorTaken = "error.taken"
    case errorTooMany = "error.tooMany"
    case errorUnavailable = "error.unavailable"
    case support
    case approveHeading = "approve.heading"
    case approveReview = "approve.review"
    case approveReviewSubmit = "approve.reviewSubmit"
    case approveDevice = "approve.device"
    case approveQuestion = "approve.question"
    case approvePick = "approve.pick"
    case approveSubmit = "approve.submit"
    case approveCancel = "approve.cancel"
    case approveApproved = "approve.approved"
    case approveCancelled = "approve.cancelled"
    case phoneHeading = "phone.heading"
    case phoneBody = "phone.body"
    case phoneCode = "phone.code"
    case phoneConfirm = "phone.confirm"
    case phoneRefuse = "phone.refuse"
    case phoneProved = "phone.proved"
    case phoneRefused = "phone.refused"
    case oidcSignInHeading = "oidc.signIn.heading"
    case oidcEmailLabel = "oidc.signIn.email"
    case oidcSendLink = "oidc.signIn.sendLink"
    case oidcPasswordHeading = "oidc.signIn.passwordHeading"
    case oidcPasswordLabel = "oidc.signIn.password"
    case oidcPasswordSubmit = "oidc.signIn.passwordSubmit"
    case oidcForgot = "oidc.signIn.forgot"
    case oidcForgotSubmit = "oidc.signIn.forgotSubmit"
    case oidcWrongPassword = "oidc.signIn.wrongPassword"
    case oidcBadAddress = "oidc.signIn.badAddress"
    case oidcApproveButton = "oidc.signIn.approve"
    case oidcApprovalEnded = "oidc.signIn.approvalEnded"
    case oidcContinueWith = "oidc.signIn.continueWith"
    case oidcProviderFailed = "oidc.signIn.providerFailed"
    case oidcAccountExists = "oidc.signIn.accountExists"
    case oidcChallenge = "oidc.signIn.challenge"
    case oidcChallengeNoScript = "oidc.signIn.challengeNoScript"
    case oidcApproveHeading = "oidc.approve.heading"
    case oidcApproveBody = "oidc.approve.body"
    case oidcApproveNumber = "oidc.approve.number"
    case oidcApproveWaiting = "oidc.approve.waiting"
    case oidcApproveSubmit = "oidc.approve.submit"
    case oidcCheckMailHeading = "oidc.checkMail.heading"
    case oidcCheckMailBody = "oidc.checkMail.body"
    case oidcCheckMailCode = "oidc.checkMail.code"
    case oidcCheckMailSubmit = "oidc.checkMail.submit"
    case oidcCheckMailWrong = "oidc.checkMail.wrong"
    case oidcCheckMailRestart = "oidc.checkMail.restart"
    case oidcForgotSent = "oidc.forgotSent"
    case oidcContinueHeading = "oidc.continue.heading"
    case oidcContinueBody = "oidc.continue.body"
    case oidcContinueSubmit = "oidc.continue.submit"
    case oidcConsentHeading = "oidc.consent.heading"
    case oidcConsentBody = "oidc.consent.body"
    case oidcConsentAccount = "oidc.consent.account"
    case oidcConsentAllow = "oidc.consent.allow"
    case oidcConsentDeny = "oidc.consent.deny"
    case oidcScopeOpenID = "oidc.scope.openid"
    case oidcScopeEmail = "oidc.scope.email"
    case oidcScopeProfile = "oidc.scope.profile"
    case oidcScopeOfflineAccess = "oidc.scope.offline_access"
    case oidcLogoutHeading = "oidc.logout.heading"
    case oidcLogoutHeadingOf = "oidc.logout.headingOf"
    case oidcLogoutBody = "oidc.logout.body"
    case oidcLogoutSubmit = "oidc.logout.submit"
    case oidcSignedOutHeading = "oidc.signedOut.heading"
    case oidcSignedOut = "oidc.signedOut.body"
    case oidcRefusedHeading = "oidc.refused.heading"
    case oidcRefusedUnknownClient = "oidc.refused.unknownClient"
    case oidcRefusedBadRedirectURI = "oidc.refused.badRedirectUri"
    case oidcRefusedRequestExpired = "oidc.refused.requestExpired"
    case oidcRefusedOtherBrowser = "oidc.refused.otherBrowser"
    case oidcRefusedForm = "oidc.refused.form"
    case oidcRefusedTooMany = "oidc.refused.tooMany"
}

/// The words of every locale for one kind of key, with `en` as the fallback.
public struct LocalizedWords<Key: RawRepresentable & CaseIterable & Hashable & Sendable>: Sendable
where Key.RawValue == String {
    private let byLocale: [String: [Key: String]]

    /// The words of each locale (`en` must be complete: ``TemplateSet`` checks the files).
    public init(_ byLocale: [String: [Key: String]]) { self.byLocale = byLocale }

    /// The locales that have words.
    public var locales: [String] { byLocale.keys.sorted() }

    /// The first of `locale`'s candidates (as given, then shortened) that has words, else `en`.
    public func locale(for wanted: String?) -> String {
        MailLocale.candidates([wanted]).first { byLocale[$0] != nil } ?? MailLocale.fallback
    }

    /// `word` in `locale` (tried as given, then shortened), else in `en`, else its key.
    public func word(_ word: Key, locale: String) -> String {
        for candidate in MailLocale.candidates([locale]) {
            if let value = byLocale[candidate]?[word] { return value }
        }
        return byLocale[MailLocale.fallback]?[word] ?? word.rawValue
    }

    /// Parses one words file: the words, and the problems of its lines.
    static func parse(_ source: String, name: String) -> (words: [Key: String], problems: [TemplateProblem]) {
        var words: [Key: String] = [:]
        var problems: [TemplateProblem] = []
        for (index, raw) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let equals = line.firstIndex(of: "=") else {
                problems.append(TemplateProblem(.unknownWord, templateName: name, line: index + 1, column: 1, detail: "expected key = value"))
                continue
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let word = Key(rawValue: key), !value.isEmpty else {
                problems.append(
                    TemplateProblem(
                        .unknownWord, templateName: name, line: index + 1, column: 1,
                        detail: "\(key) is not one of \(Key.allCases.map(\.rawValue).joined(separator: ", ")), or has no value"))
                continue
            }
            words[word] = value
        }
        return (words, problems)
    }
}

/// The units of time mails use.
public typealias MailWords = LocalizedWords<MailWord>
/// The hosted page's words.
public typealias PageWords = LocalizedWords<PageWord>
