import PosternAPI
import PosternCore

/// The hosted sign-in page's challenge over HTTP (issue 47): Postern's proof-of-work script, served
/// as a static file like the style sheet, and the Content-Security-Policy of a page that shows a
/// challenge: the pages' strict one, widened for our own script and `GET /v1/challenge`, or for
/// exactly the configured CAPTCHA service's origins.
enum ChallengeScript {
    /// `GET /challenge.js`.
    static func route() -> Route {
        Route(method: "GET", path: PageChallenge.proofOfWorkScript, summary: "The hosted sign-in page's proof-of-work script", access: .public, status: 200,
              contract: .init(answer: .content(mediaType: "text/javascript", schema: .string("JavaScript.")))) { _ throws(AuthError) in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "public, max-age=3600"),
                                                ("X-Content-Type-Options", "nosniff")],
                         body: Array(source.utf8))
        }
    }

    /// The CSP of a page showing `challenge`: scripts from this origin only, and fetches to it
    /// (the challenge), for the proof of work; for a CAPTCHA, scripts, frames, styles and fetches
    /// from that service's documented origins only (its widget is an iframe from there).
    static func contentSecurityPolicy(_ challenge: PageChallenge) -> String {
        switch challenge {
        case .proofOfWork:
            return "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'"
        case .captcha(let service, _):
            let origins = Self.origins(of: service).joined(separator: " ")
            return "default-src 'none'; script-src \(origins); frame-src \(origins); connect-src \(origins); style-src 'self' \(origins); "
                + "img-src 'none'; frame-ancestors 'none'; base-uri 'none'"
        }
    }

    /// The origins each service's documentation asks a CSP to allow for its widget.
    static func origins(of service: CaptchaService) -> [String] {
        switch service {
        case .turnstile: ["https://challenges.cloudflare.com"]
        case .hcaptcha: ["https://hcaptcha.com", "https://*.hcaptcha.com"]
        case .recaptcha: ["https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/", "https://recaptcha.google.com/recaptcha/"]
        }
    }

    /// The script: no dependency, no inline part; WebCrypto's SHA-256 in batches. Without
    /// WebCrypto (a page not on https or loopback) it does nothing and the form goes without a
    /// solution, which the page answers with the challenge's words.
    static let source = #"""
        // Postern's proof of work on the hosted sign-in page (issue 47): fetches a challenge from
        // GET /v1/challenge (ALTCHA's classic format), finds its number with WebCrypto's SHA-256, and
        // sends the form the person submitted, as they filled it, with the ALTCHA payload in its hidden
        // challengeSolution field. Solving starts when the page loads, so the answer is usually ready
        // when the button is pressed.
        (() => {
          "use strict";
          const fieldName = "challengeSolution";
          const batch = 500;
          const fields = Array.from(document.querySelectorAll("input[name='" + fieldName + "']"));
          if (fields.length === 0 || !(window.crypto && window.crypto.subtle)) return;

          const encoder = new TextEncoder();
          const bytesOfHex = (hex) => Uint8Array.from(hex.match(/../g) || [], (pair) => parseInt(pair, 16));
          const same = (buffer, expected) => {
            const bytes = new Uint8Array(buffer);
            if (bytes.length !== expected.length) return false;
            for (let i = 0; i < bytes.length; i++) if (bytes[i] !== expected[i]) return false;
            return true;
          };

          async function solve() {
            const response = await fetch("/v1/challenge", { headers: { Accept: "application/json" }, cache: "no-store" });
            if (!response.ok) throw new Error("challenge: HTTP " + response.status);
            const challenge = await response.json();
            if (challenge.kind !== "altcha" || challenge.algorithm !== "SHA-256") throw new Error("challenge: not a proof of work");
            const expected = bytesOfHex(challenge.challenge);
            const started = Date.now();
            // The digests of a batch run together: one await per batch, not one per number.
            for (let start = 0; start <= challenge.maxnumber; start += batch) {
              const end = Math.min(start + batch - 1, challenge.maxnumber);
              const digests = [];
              for (let n = start; n <= end; n++) digests.push(crypto.subtle.digest("SHA-256", encoder.encode(challenge.salt + n)));
              const found = (await Promise.all(digests)).findIndex((digest) => same(digest, expected));
              if (found >= 0) {
                const payload = {
                  algorithm: challenge.algorithm, challenge: challenge.challenge, number: start + found,
                  salt: challenge.salt, signature: challenge.signature, took: Date.now() - started,
                };
                const expires = Number((/[?&]expires=(\d+)/.exec(challenge.salt) || [])[1] || 0);
                return { payload: btoa(JSON.stringify(payload)), expires };
              }
            }
            throw new Error("challenge: no number found");
          }

          // One solution, started now; taken by the first form sent (a solution is accepted once), or
          // replaced when it is about to expire.
          let early = solve();
          early.catch(() => {});
          async function solution() {
            const found = early ? await early.catch(() => null) : null;
            early = null;
            return found && found.expires * 1000 > Date.now() + 15000 ? found : solve();
          }

          for (const form of new Set(fields.map((field) => field.form).filter(Boolean))) {
            let state = "idle";
            form.addEventListener("submit", (event) => {
              if (state === "sending") return;
              event.preventDefault();
              if (state === "solving") return;
              state = "solving";
              form.setAttribute("aria-busy", "true");
              const submitter = event.submitter || undefined;
              const field = form.querySelector("input[name='" + fieldName + "']");
              // Without a solution (the challenge could not be fetched) the form goes as it is, and the
              // page answers with the challenge's words.
              solution().then((found) => found.payload, () => "").then((payload) => {
                if (field) field.value = payload;
                state = "sending";
                form.removeAttribute("aria-busy");
                // In a task of its own: a solution ready at once would otherwise come while the first
                // submit event is still being dispatched, when the browser ignores a new submission.
                setTimeout(() => form.requestSubmit(submitter), 0);
              });
            });
            // Back to this page from the next one: its solution was used; solve again when sent.
            window.addEventListener("pageshow", (event) => {
              if (!event.persisted) return;
              state = "idle";
              for (const field of fields) field.value = "";
            });
          }
        })();
        """#
}
