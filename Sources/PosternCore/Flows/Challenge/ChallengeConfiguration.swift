/// When the public endpoints that send mail or SMS ask the client to solve a challenge first
/// (`--challenge`).
public enum ChallengeMode: String, Sendable, Hashable, CaseIterable {
    /// Never.
    case off
    /// Once a client IP or a recipient domain has made more requests an hour than its threshold
    /// without one (``ChallengeConfiguration/ipPerHour``, ``ChallengeConfiguration/domainPerHour``).
    case whenLimited = "when-limited"
    /// On every such request.
    case always
}

/// A CAPTCHA service whose token the gate verifies with the service's documented siteverify
/// request (`--captcha`).
public enum CaptchaService: String, Sendable, Hashable, CaseIterable {
    /// Cloudflare Turnstile.
    case turnstile
    /// hCaptcha.
    case hcaptcha
    /// Google reCAPTCHA (v2, or v3 with a score).
    case recaptcha

    /// The documented siteverify endpoint (`--captcha-verify-url` replaces it).
    public var verifyURL: String {
        switch self {
        case .turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify"
        case .hcaptcha: "https://api.hcaptcha.com/siteverify"
        case .recaptcha: "https://www.google.com/recaptcha/api/siteverify"
        }
    }

    /// The form field the service's widget fills with its token on a page.
    public var formField: String {
        switch self {
        case .turnstile: "cf-turnstile-response"
        case .hcaptcha: "h-captcha-response"
        case .recaptcha: "g-recaptcha-response"
        }
    }

    /// The widget's script, as the service documents it.
    public var scriptURL: String {
        switch self {
        case .turnstile: "https://challenges.cloudflare.com/turnstile/v0/api.js"
        case .hcaptcha: "https://js.hcaptcha.com/1/api.js"
        case .recaptcha: "https://www.google.com/recaptcha/api.js"
        }
    }

    /// The class of the element the widget renders into.
    public var widgetClass: String {
        switch self {
        case .turnstile: "cf-turnstile"
        case .hcaptcha: "h-captcha"
        case .recaptcha: "g-recaptcha"
        }
    }
}

/// The challenge's settings: when it is asked for, and what must be solved: the built-in proof of
/// work (ALTCHA-compatible, no third party) unless a CAPTCHA service is configured.
public struct ChallengeConfiguration: Sendable, Hashable {
    /// When a challenge is asked for. Core's default is off (the settings' is when-limited).
    public var mode: ChallengeMode
    /// The CAPTCHA service, or nil for the built-in proof of work.
    public var captcha: CaptchaService?
    /// The CAPTCHA's public site key, shown to the page's widget (not a secret).
    public var captchaSiteKey: String?
    /// The CAPTCHA's secret, sent only to its siteverify endpoint.
    public var captchaSecret: String?
    /// The siteverify URL (the service's documented one unless set).
    public var captchaVerifyURL: String?
    /// The hosts a CAPTCHA may be solved on: the siteverify answer's `hostname` must be one of them
    /// (lowercase; empty: not checked, for apps whose tokens name their package, not a host).
    public var captchaHostnames: [String] = []
    /// The lowest reCAPTCHA v3 `score` taken (0.0 a bot … 1.0 a person); an answer without a score
    /// (reCAPTCHA v2, Turnstile, hCaptcha's free tier) is not judged by it.
    public var captchaMinimumScore: Double = ChallengeConfiguration.defaultMinimumScore
    /// The proof of work's largest number: a client tries half of it on average (`--challenge-difficulty`).
    public var difficulty: Int64
    /// Seconds a proof-of-work challenge can be solved and sent in.
    public var lifetime: Int64
    /// In when-limited mode: requests one client IP makes an hour without a solution before it must
    /// solve one (0: the IP never asks for one).
    public var ipPerHour: Int64
    /// In when-limited mode: mails to one recipient domain an hour without a solution before every
    /// request for that domain must solve one (0: domains never ask for one).
    public var domainPerHour: Int64

    public init(
        mode: ChallengeMode = .off, captcha: CaptchaService? = nil, captchaSiteKey: String? = nil, captchaSecret: String? = nil,
        captchaVerifyURL: String? = nil, difficulty: Int64 = ChallengeConfiguration.defaultDifficulty,
        lifetime: Int64 = ChallengeConfiguration.defaultLifetime, ipPerHour: Int64 = ChallengeConfiguration.defaultIPPerHour,
        domainPerHour: Int64 = ChallengeConfiguration.defaultDomainPerHour
    ) {
        self.mode = mode
        self.captcha = captcha
        self.captchaSiteKey = captchaSiteKey
        self.captchaSecret = captchaSecret
        self.captchaVerifyURL = captchaVerifyURL
        self.difficulty = difficulty
        self.lifetime = lifetime
        self.ipPerHour = ipPerHour
        self.domainPerHour = domainPerHour
    }

    /// The default lowest reCAPTCHA v3 score: the threshold Google's documentation starts from.
    public static let defaultMinimumScore = 0.5
    /// The default largest number of the proof of work.
    public static let defaultDifficulty: Int64 = 250_000
    /// The default life of a proof-of-work challenge: 5 minutes.
    public static let defaultLifetime: Int64 = 300
    /// The default requests per client IP an hour before a challenge.
    public static let defaultIPPerHour: Int64 = 20
    /// The default mails per recipient domain an hour before a challenge: half the domain cap's default.
    public static let defaultDomainPerHour: Int64 = 300

    /// What the client solves: "altcha" or the CAPTCHA service's name.
    public var kind: String { captcha?.rawValue ?? ProofOfWork.kind }
}
