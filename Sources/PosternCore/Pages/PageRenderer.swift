/// Renders the hosted pages from a checked ``TemplateSet``; rendering cannot fail.
///
/// Made only by ``TemplateSet/pageRenderer(branding:)``, which refuses a set with problems, so
/// every kind has a template in the fallback locale. The words come from the page's language
/// (`page.strings`), every value is HTML-escaped by the engine.
public struct PageRenderer: Sendable {
    /// The installation-wide values (`appName`, `supportEmail`).
    public let branding: Branding
    private let templatesByLocale: [String: [PageKind: CompiledTemplate<PageVariable>]]
    private let fallback: [PageKind: CompiledTemplate<PageVariable>]
    private let words: PageWords

    init(
        branding: Branding, templatesByLocale: [String: [PageKind: CompiledTemplate<PageVariable>]],
        fallback: [PageKind: CompiledTemplate<PageVariable>], words: PageWords
    ) {
        self.branding = branding
        self.templatesByLocale = templatesByLocale
        self.fallback = fallback
        self.words = words
    }

    /// The language a page asked for in `lang` is shown in: the first of its candidates (as given,
    /// then shortened) that has words or page templates, else `en`.
    public func locale(for lang: String?) -> String {
        MailLocale.candidates([lang]).first { words.locales.contains($0) || templatesByLocale[$0] != nil } ?? MailLocale.fallback
    }

    /// `page` in the language `lang` asks for (see ``locale(for:)``).
    public func render(_ page: HostedPage, lang: String?) -> RenderedPage {
        let locale = locale(for: lang)
        let template = MailLocale.candidates([locale]).lazy.compactMap { templatesByLocale[$0]?[page.kind] }.first
            ?? fallback[page.kind]
        // `fallback` has every kind (the set's check), so the empty answer is never taken.
        return RenderedPage(locale: locale, html: template?.render(context(for: page, locale: locale)) ?? "")
    }

    /// The values `page` is rendered with in `locale`.
    public func context(for page: HostedPage, locale: String) -> TemplateContext<PageVariable> {
        var context = TemplateContext<PageVariable>()
        func word(_ word: PageWord) -> String { words.word(word, locale: locale) }
        context[.appName] = branding.appName
        context[.supportEmail] = branding.supportEmail
        context[.supportLabel] = word(.support)
        context[.lang] = locale
        switch page {
        case .signIn(let continueLink, let code):
            context[.heading] = word(.signInHeading)
            context[.continueLink] = continueLink
            context[.continueLabel] = word(.signInContinue)
            context[.message] = continueLink == nil ? word(.signInNoContinue) : nil
            context[.code] = code
            context[.codeLabel] = word(.signInCode)
        case .resetPassword(let form):
            context[.heading] = word(.resetHeading)
            fill(form, mode: .resetPassword, submit: word(.resetSubmit), into: &context)
            context[.passwordLabel] = word(.resetLabel)
            context[.passwordMinLength] = String(PasswordPolicy.minimumLength)
            context[.passwordMaxLength] = String(PasswordPolicy.maximumLength)
        case .confirm(let action, let email, let form, let number, let retry):
            let actionWords = Self.words(of: action)
            context[.heading] = word(actionWords.heading)
            fill(form, mode: action, submit: word(actionWords.submit), into: &context)
            fill(sentence: word(actionWords.body), email: email, into: &context)
            context[.confirmLabel] = word(.confirmType)
            context[.confirmNumber] = number
            context[.message] = retry ? word(.confirmWrong) : nil
        case .done(let action, let email, let backLink):
            context[.heading] = word(.doneHeading)
            fill(sentence: word(Self.words(of: action).done), email: email, into: &context)
            context[.backLink] = backLink
            context[.backLabel] = word(.back)
        case .signedIn(let backLink):
            context[.heading] = word(.signedInHeading)
            fill(sentence: word(.signedInDone), email: "", into: &context)
            context[.backLink] = backLink
            context[.backLabel] = word(.back)
        case .error(let error):
            context[.heading] = word(.errorHeading)
            context[.message] = word(Self.word(for: error))
        case .approveReview(let form):
            context[.heading] = word(.approveHeading)
            context[.message] = word(.approveReview)
            fill(form, mode: .signIn, submit: word(.approveReviewSubmit), into: &context)
        case .approveChoice(let device, let maskedEmail, let form):
            context[.heading] = word(.approveHeading)
            fill(form, mode: .signIn, submit: word(.approveSubmit), into: &context)
            context[.deviceLabel] = word(.approveDevice)
            context[.device] = device
            fill(sentence: word(.approveQuestion), email: maskedEmail, into: &context)
            context[.pickLabel] = word(.approvePick)
            context[.cancelLabel] = word(.approveCancel)
        case .approveDone(let device):
            context[.heading] = word(.approveHeading)
            context[.message] = word(device == nil ? .approveCancelled : .approveApproved)
            context[.device] = device
        case .phoneClaim(let claimID, let csrf):
            context[.heading] = word(.phoneHeading)
            context[.message] = word(.phoneBody)
            context[.claimID] = claimID
            context[.csrf] = csrf
            context[.codeLabel] = word(.phoneCode)
            context[.submitLabel] = word(.phoneConfirm)
            context[.cancelLabel] = word(.phoneRefuse)
        case .phoneDone(let refused):
            context[.heading] = word(.phoneHeading)
            context[.message] = word(refused ? .phoneRefused : .phoneProved)
        case .oidcSignIn(let form, let clientName, let loginHint, let passwords, let retry, let providers, let challenge):
            context[.heading] = Self.naming(word(.oidcSignInHeading), clientName)
            let slots: [(PageVariable, PageVariable)] = [
                (.provider1, .provider1Label), (.provider2, .provider2Label), (.provider3, .provider3Label), (.provider4, .provider4Label),
            ]
            for (button, slot) in zip(providers, slots) {
                context[slot.0] = button.id
                context[slot.1] = Self.naming(word(.oidcContinueWith), button.name)
            }
            fill(form, submit: word(.oidcSendLink), into: &context)
            context[.emailLabel] = word(.oidcEmailLabel)
            context[.email] = loginHint
            context[.message] = retry.map { retry in
                if case .hookDenied(let message) = retry { return message }
                return Self.word(for: retry).map(word) ?? ""
            }
            context[.approveLabel] = word(.oidcApproveButton)
            if passwords {
                context[.passwordHeading] = word(.oidcPasswordHeading)
                context[.passwordLabel] = word(.oidcPasswordLabel)
                context[.passwordSubmitLabel] = word(.oidcPasswordSubmit)
                context[.forgotLabel] = word(.oidcForgot)
                context[.forgotSubmitLabel] = word(.oidcForgotSubmit)
            }
            if let challenge {
                context[.challengeScript] = challenge.scriptURL
                context[.challengeNoScript] = word(.oidcChallengeNoScript)
                switch challenge {
                case .proofOfWork:
                    context[.challengeField] = PageChallenge.proofOfWorkField
                case .captcha(let service, let siteKey):
                    context[.captchaClass] = service.widgetClass
                    context[.captchaSiteKey] = siteKey
                }
            }
        case .oidcCheckMail(let form, let email, let retry):
            context[.heading] = word(.oidcCheckMailHeading)
            fill(form, submit: word(.oidcCheckMailSubmit), into: &context)
            fill(sentence: word(.oidcCheckMailBody), email: email, into: &context)
            context[.codeLabel] = word(.oidcCheckMailCode)
            context[.message] = retry ? word(.oidcCheckMailWrong) : nil
            context[.restartLabel] = word(.oidcCheckMailRestart)
        case .oidcApprove(let form, let email, let number, let waiting):
            context[.heading] = word(.oidcApproveHeading)
            fill(form, submit: word(.oidcApproveSubmit), into: &context)
            fill(sentence: word(.oidcApproveBody), email: email, into: &context)
            let instruction = Self.split(word(.oidcApproveNumber))
            context[.approvalStart] = instruction.start
            context[.approvalNumber] = String(number)
            context[.approvalEnd] = instruction.end
            context[.message] = waiting ? word(.oidcApproveWaiting) : nil
            context[.restartLabel] = word(.oidcCheckMailRestart)
        case .oidcForgotSent(let email):
            context[.heading] = word(.oidcCheckMailHeading)
            fill(sentence: word(.oidcForgotSent), email: email, into: &context)
        case .oidcContinue(let form, let oobCode, let clientName):
            context[.heading] = Self.naming(word(.oidcContinueHeading), clientName)
            fill(form, submit: word(.oidcContinueSubmit), into: &context)
            context[.message] = word(.oidcContinueBody)
            context[.oobCode] = oobCode
        case .oidcConsent(let form, let clientName, let scopes, let email):
            context[.heading] = Self.naming(word(.oidcConsentHeading), clientName)
            fill(form, submit: word(.oidcConsentAllow), into: &context)
            context[.cancelLabel] = word(.oidcConsentDeny)
            context[.message] = Self.naming(word(.oidcConsentBody), clientName)
            fill(sentence: word(.oidcConsentAccount), email: email, into: &context)
            // `openid` is always asked for (the request's check); it is listed whatever the list says.
            context[.scopeOpenID] = word(.oidcScopeOpenID)
            context[.scopeEmail] = scopes.contains("email") ? word(.oidcScopeEmail) : nil
            context[.scopeProfile] = scopes.contains("profile") ? word(.oidcScopeProfile) : nil
            context[.scopeOfflineAccess] = scopes.contains("offline_access") ? word(.oidcScopeOfflineAccess) : nil
        case .oidcLogoutConfirm(let form, let clientName):
            context[.heading] = clientName.map { Self.naming(word(.oidcLogoutHeadingOf), $0) } ?? word(.oidcLogoutHeading)
            fill(form, submit: word(.oidcLogoutSubmit), into: &context)
            context[.message] = word(.oidcLogoutBody)
        case .oidcSignedOut:
            context[.heading] = word(.oidcSignedOutHeading)
            fill(sentence: word(.oidcSignedOut), email: "", into: &context)
        case .oidcRefused(let refusal):
            context[.heading] = word(.oidcRefusedHeading)
            context[.message] = word(Self.word(for: refusal))
        }
        return context
    }

    private func fill(_ form: OIDCPageForm, submit: String, into context: inout TemplateContext<PageVariable>) {
        context[.request] = form.request
        context[.csrf] = form.csrf
        context[.submitLabel] = submit
    }

    /// `words` with the client's name in place of its `%@` (the first; the name is not searched
    /// again). The engine escapes the whole when it renders it.
    private static func naming(_ words: String, _ clientName: String) -> String {
        guard let slot = words.range(of: "%@") else { return words }
        return words[..<slot.lowerBound] + clientName + words[slot.upperBound...]
    }

    private func fill(_ form: PageForm, mode: EmailAction, submit: String, into context: inout TemplateContext<PageVariable>) {
        context[.formMode] = mode.rawValue
        context[.oobCode] = form.oobCode
        context[.csrf] = form.csrf
        context[.submitLabel] = submit
    }

    /// A sentence with `%@` for the address, split around it so the template can mark the address
    /// up; a sentence without `%@` is all `sentenceStart`.
    private func fill(sentence: String, email: String, into context: inout TemplateContext<PageVariable>) {
        let parts = Self.split(sentence)
        context[.sentenceStart] = parts.start
        guard let end = parts.end else { return }
        context[.email] = email
        context[.sentenceEnd] = end
    }

    /// `sentence` around its first `%@`: the words before and after it (`end` nil without one).
    private static func split(_ sentence: String) -> (start: String, end: String?) {
        guard let slot = sentence.range(of: "%@") else { return (sentence, nil) }
        return (String(sentence[..<slot.lowerBound]), String(sentence[slot.upperBound...]))
    }

    /// The words of the page for each action a link can carry.
    private static func words(of action: EmailAction) -> (heading: PageWord, body: PageWord, submit: PageWord, done: PageWord) {
        switch action {
        // A sign-in link has no form and no done page; its words are the sign-in page's.
        case .signIn: (.signInHeading, .signInNoContinue, .signInContinue, .doneHeading)
        case .resetPassword: (.resetHeading, .resetLabel, .resetSubmit, .resetDone)
        case .verifyEmail: (.verifyEmailHeading, .verifyEmailBody, .verifyEmailSubmit, .verifyEmailDone)
        case .verifyAndChangeEmail:
            (.verifyAndChangeEmailHeading, .verifyAndChangeEmailBody, .verifyAndChangeEmailSubmit, .verifyAndChangeEmailDone)
        case .recoverEmail: (.recoverEmailHeading, .recoverEmailBody, .recoverEmailSubmit, .recoverEmailDone)
        }
    }

    private static func word(for error: PageError) -> PageWord {
        switch error {
        case .expired: .errorExpired
        case .invalid: .errorInvalid
        case .used: .errorUsed
        case .superseded: .errorSuperseded
        case .otherBrowser: .errorOtherBrowser
        case .form: .errorForm
        case .weakPassword(.tooShort): .errorWeakTooShort
        case .weakPassword(.tooLong): .errorWeakTooLong
        case .weakPassword(.isTheAddress): .errorWeakIsTheAddress
        case .addressTaken: .errorTaken
        case .tooManyAttempts: .errorTooMany
        case .unavailable: .errorUnavailable
        }
    }

    /// The words of `retry`; nil for a hook's refusal, which brings its own.
    private static func word(for retry: OIDCSignInRetry) -> PageWord? {
        switch retry {
        case .wrongPassword: .oidcWrongPassword
        case .badAddress: .oidcBadAddress
        case .approvalEnded: .oidcApprovalEnded
        case .providerFailed: .oidcProviderFailed
        case .accountExists: .oidcAccountExists
        case .challenge: .oidcChallenge
        case .hookDenied: nil
        }
    }

    private static func word(for refusal: OIDCPageRefusal) -> PageWord {
        switch refusal {
        case .unknownClient: .oidcRefusedUnknownClient
        case .badRedirectURI: .oidcRefusedBadRedirectURI
        case .requestExpired: .oidcRefusedRequestExpired
        case .otherBrowser: .oidcRefusedOtherBrowser
        case .form: .oidcRefusedForm
        case .tooManyAttempts: .oidcRefusedTooMany
        case .unavailable: .errorUnavailable
        }
    }
}

extension HostedPage {
    /// A page of `kind` with example values, for `postern templates render --page` and for
    /// checking that every page template renders.
    public static func sample(of kind: PageKind) -> HostedPage {
        let form = PageForm(oobCode: "SAMPLE-not-a-real-code_0123456789abcdefghij", csrf: "SAMPLE-csrf-token")
        let oidcForm = OIDCPageForm(request: "SAMPLE-request-0123456789", csrf: "SAMPLE-csrf-token")
        switch kind {
        case .signIn: return .signIn(continueLink: "https://app.example.com/finish?mode=signIn&oobCode=SAMPLE", code: "123456")
        case .resetPassword: return .resetPassword(form)
        case .confirm: return .confirm(.verifyEmail, email: "jane.doe@example.com", form: form, number: "472")
        case .done: return .done(.verifyAndChangeEmail, email: "jane.doe@example.com", backLink: "https://app.example.com/finish")
        case .error: return .error(.expired)
        case .approveReview: return .approveReview(form)
        case .approveChoice: return .approveChoice(device: "Chrome on Linux", maskedEmail: "j•••@example.com", form: form)
        case .approveDone: return .approveDone(device: "Chrome on Linux")
        case .phoneClaim: return .phoneClaim(claimID: "SAMPLE-claim-0123456789", csrf: "SAMPLE-csrf-token")
        case .phoneDone: return .phoneDone(refused: false)
        case .oidcSignIn:
            return .oidcSignIn(
                oidcForm, clientName: "Example Wiki", loginHint: "jane.doe@example.com", passwords: true,
                providers: [OIDCProviderButton(id: "google", name: "Google")])
        case .oidcCheckMail: return .oidcCheckMail(oidcForm, email: "jane.doe@example.com")
        case .oidcContinue: return .oidcContinue(oidcForm, oobCode: form.oobCode, clientName: "Example Wiki")
        case .oidcConsent:
            return .oidcConsent(oidcForm, clientName: "Example Wiki", scopes: OIDCClient.knownScopes, email: "jane.doe@example.com")
        case .oidcLogout: return .oidcLogoutConfirm(oidcForm, clientName: "Example Wiki")
        case .oidcApprove: return .oidcApprove(oidcForm, email: "jane.doe@example.com", number: 47, waiting: false)
        }
    }
}
