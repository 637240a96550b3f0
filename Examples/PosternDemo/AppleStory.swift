// RxFireAuth's Apple story, walked without a person: a guest gains an Apple ID, signs out, and
// signs in with Apple again into the same account. The ID tokens come from a test provider's mint
// endpoint (Tests/integration's identity provider) in place of the Apple sheet. One line per
// step, `name key=value …`, so a script can check them; the first failure ends the run non-zero.
//
//   postern-demo --server URL --apple-story --mint URL --apple-audience BUNDLE_ID
//                [--apple-sub SUB] [--apple-email EMAIL] [--apple-name "Given Family"]
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PosternAuth

enum AppleStory {
    /// A step that did not go as the story says.
    struct Failure: Error {
        let step: String
        let reason: String
    }

    /// What the story needs from the command line.
    struct Options {
        let mint: URL
        let audience: String
        let subject: String
        let email: String
        let name: PersonNameComponents

        /// Reads the options; a usage line when one is missing.
        init(_ option: (String) -> String?) throws(Failure) {
            guard let mint = option("--mint").flatMap(URL.init(string:)), let audience = option("--apple-audience") else {
                throw Failure(step: "usage", reason: "--apple-story needs --mint URL and --apple-audience BUNDLE_ID")
            }
            self.mint = mint
            self.audience = audience
            subject = option("--apple-sub") ?? "apple-story-\(UUID().uuidString.lowercased())"
            email = option("--apple-email") ?? "\(subject)@privaterelay.example.org"
            let words = (option("--apple-name") ?? "Ada Lovelace").split(separator: " ", maxSplits: 1).map(String.init)
            var name = PersonNameComponents()
            name.givenName = words.first
            name.familyName = words.count > 1 ? words[1] : nil
            self.name = name
        }
    }

    /// Runs the story against `server`; the process's exit status.
    static func run(server: URL, option: (String) -> String?) async -> Int32 {
        do {
            try await walk(server: server, options: try Options(option))
            say("apple-story ok")
            return 0
        } catch let failure as Failure {
            say("FAIL \(failure.step): \(failure.reason)")
            return failure.step == "usage" ? 64 : 1
        } catch {
            say("FAIL: \(error)")
            return 1
        }
    }

    private static func walk(server: URL, options: Options) async throws {
        // Its own session in memory: the story starts signed out whatever a state file holds.
        let auth = PosternAuth(serverURL: server, storage: MemorySessionStorage())
        let guest = try await step("guest") { try await auth.signInAnonymously() }
        say("guest uid=\(guest.uid) isAnonymous=\(guest.isAnonymous)")

        let first = try await step("apple-sign-in") {
            let (token, nonce) = try await mint(options)
            return try await auth.login(with: .apple(idToken: token, rawNonce: nonce.raw, fullName: options.name))
        }
        say("apple-sign-in uid=\(first.uid) isNewUser=\(first.isNewUser) sameUid=\(first.uid == guest.uid) displayName=\(auth.user?.displayName ?? "nil")")
        guard first.uid == guest.uid, first.isNewUser else {
            throw Failure(step: "apple-sign-in", reason: "the guest \(guest.uid) should have gained the Apple ID as a new user")
        }

        await auth.signOut()
        say("signed-out signedIn=\(await auth.isSignedIn)")

        let again = try await step("apple-sign-in-again") {
            // A fresh token and a fresh nonce: a token is accepted once, and Apple names the user only the first time.
            let (token, nonce) = try await mint(options)
            return try await auth.login(with: .apple(idToken: token, rawNonce: nonce.raw, fullName: nil))
        }
        say("apple-sign-in-again uid=\(again.uid) isNewUser=\(again.isNewUser) sameUid=\(again.uid == guest.uid)")
        guard again.uid == guest.uid, !again.isNewUser else {
            throw Failure(step: "apple-sign-in-again", reason: "Apple should sign in to \(guest.uid) again")
        }
        let providers = auth.user?.providers ?? []
        say("providers \(providers.joined(separator: ","))")
        guard providers.contains("apple") else { throw Failure(step: "providers", reason: "the account does not list apple") }
    }

    /// Runs `body`, naming `step` in its failure.
    private static func step<T>(_ step: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as Failure {
            throw failure
        } catch let error as PosternAuthError {
            throw Failure(step: step, reason: error.localizedDescription)
        } catch {
            throw Failure(step: step, reason: "\(error)")
        }
    }

    /// An Apple-style ID token from the test provider for a new nonce: the token carries the
    /// nonce's SHA-256 (`hashed`), and the app sends `raw` with it.
    private static func mint(_ options: Options) async throws -> (String, SignInNonce) {
        guard let nonce = SignInNonce.make() else { throw Failure(step: "mint", reason: "this platform offers no SHA-256") }
        let query = [
            ("sub", options.subject), ("email", options.email), ("email_verified", "true"), ("aud", options.audience), ("nonce", nonce.hashed),
        ].map { "\($0)=\(escape($1))" }.joined(separator: "&")
        guard var components = URLComponents(url: options.mint, resolvingAgainstBaseURL: false) else {
            throw Failure(step: "mint", reason: "--mint is not a URL")
        }
        components.percentEncodedQuery = [components.percentEncodedQuery, query].compactMap { $0 }.joined(separator: "&")
        guard let url = components.url else { throw Failure(step: "mint", reason: "--mint is not a URL") }
        let (data, response) = try await URLSession.shared.data(from: url)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 200, !token.isEmpty else { throw Failure(step: "mint", reason: "the mint endpoint answered HTTP \(status)") }
        say("apple-token minted sub=\(options.subject) aud=\(options.audience)")
        return (token, nonce)
    }

    /// A query value with everything but the unreserved characters percent-encoded (`+` and `@` too).
    private static func escape(_ value: String) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }
}
