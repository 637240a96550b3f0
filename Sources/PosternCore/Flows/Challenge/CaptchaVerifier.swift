import Foundation
import PosternCrypto

/// A CAPTCHA token checked with its service's documented siteverify request: a form POST of
/// `secret`, `response` (the token) and `remoteip`, answered with JSON whose `success` says
/// whether the token is genuine and unused (Turnstile, hCaptcha and reCAPTCHA share that shape),
/// `hostname` where it was solved (checked against `hostnames` when set) and, for reCAPTCHA v3,
/// `score` (checked against `minimumScore`). Over ``ProviderHTTP`` (libcurl in the daemon: https only, certificates checked, no redirects).
struct CaptchaVerifier: Sendable {
    let service: CaptchaService
    let secret: String
    let url: String
    let http: any ProviderHTTP
    /// `--captcha-hostnames` (lowercase); empty: `hostname` is not checked.
    var hostnames: [String] = []
    /// `--captcha-minimum-score`, for an answer that carries a `score`.
    var minimumScore: Double = ChallengeConfiguration.defaultMinimumScore

    /// How long a token is remembered as used: longer than any of the services lets a token live
    /// (Turnstile 300 s, hCaptcha 120 s, reCAPTCHA 120 s), so a replay within its life is caught
    /// here even if the service did not.
    static let rememberedFor: Int64 = 900

    /// Asks the service about `token`.
    /// - Returns: the key the token is recorded under and until when.
    /// - Throws: `ChallengeRefusal` when the service says no or the token is not one;
    ///   `AuthError.unavailable` when the service cannot be asked or answers nonsense.
    func verify(_ token: String, clientIP: String?, now: Int64) throws(AuthError) -> Result<(onceKey: [UInt8], expiresAt: Int64), ChallengeRefusal> {
        guard !token.isEmpty, token.utf8.count <= 4096, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.malformed)
        }
        var fields = [("secret", secret), ("response", token)]
        if let clientIP { fields.append(("remoteip", clientIP)) }
        let response: ProviderHTTPResponse
        do {
            response = try http.postForm(url, fields: fields, basic: nil)
        } catch {
            throw AuthError.unavailable("the CAPTCHA service (\(service.rawValue)) cannot be reached: \(error.description)")
        }
        guard response.status == 200, let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let success = object["success"] as? Bool
        else {
            throw AuthError.unavailable("the CAPTCHA service (\(service.rawValue)) answered HTTP \(response.status) without a verdict")
        }
        guard success else { return .failure(.captchaRefused) }
        if !hostnames.isEmpty {
            guard let hostname = object["hostname"] as? String, hostnames.contains(hostname.lowercased()) else {
                return .failure(.captchaHostname)
            }
        }
        if let score = object["score"] as? Double, !(score >= minimumScore) { return .failure(.captchaScore) }
        return .success((SHA256.hash("postern-challenge|\(service.rawValue)|" + token), FlowMath.adding(Self.rememberedFor, to: now)))
    }
}
