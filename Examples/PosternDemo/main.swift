// A terminal app on PosternAuth alone: FUAP's welcome flow and RxFireAuth's guest story, as an
// iOS app would walk them, with typed lines in place of screens.
//
//   postern-demo --server http://127.0.0.1:8080 [--state FILE]
//   postern-demo --server URL --apple-story --mint URL --apple-audience BUNDLE_ID   (AppleStory.swift)
//   postern-demo --server URL --solve-challenge   (a server with --challenge: one proof of work, timed)
//
// The state file keeps the session between runs (0600), as the Keychain would on a phone.
import Foundation
import PosternAuth

/// Writes at once (unbuffered), so a script driving the demo sees each prompt as it comes.
func write(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// Asks; nil at the end of input.
func ask(_ prompt: String) -> String? {
    write("\(prompt) ")
    return readLine()?.trimmingCharacters(in: .whitespaces)
}

func say(_ line: String) {
    write(line + "\n")
}

func describe(_ user: User?) -> String {
    guard let user else { return "nobody is signed in" }
    if user.isAnonymous { return "guest \(user.uid)" }
    let bio = user.attributes["bio"].flatMap { if case .string(let text) = $0 { text } else { nil } }
    return "\(user.displayName ?? "(no name)") <\(user.email ?? "")> uid \(user.uid)" + (bio.map { " — \($0)" } ?? "")
}

func describe(_ login: LoginDescriptor) -> String {
    "LoginDescriptor uid=\(login.uid) isNewUser=\(login.isNewUser) allowMigration=\(login.allowMigration.map(String.init) ?? "nil") "
        + "oldUserId=\(login.oldUserId ?? "nil") newUserId=\(login.newUserId)"
}

/// Signs in with `credentials`, asking the user when a guest account would be replaced.
func login(_ auth: PosternAuth, _ credentials: Credentials) async throws -> LoginDescriptor {
    do {
        return try await auth.login(with: credentials)
    } catch .migrationRequired(let required) {
        say("This address already has an account. The guest account \(required.anonymousUid) on this device will be replaced.")
        let answer = ask("Move the guest's data to it? [y/n]")?.lowercased()
        return try await auth.login(with: required.credentials, allowMigration: answer == "y")
    }
}

/// FUAP's welcome: an address, then the link, the code or (when this device set one) the password.
func welcome(_ auth: PosternAuth) async throws {
    guard let email = ask("Email address:"), !email.isEmpty else { return }
    let route = try await auth.welcome(email: email)
    switch route {
    case .linkSent: say("Link sent: check your mail.")
    case .linkSentOrPassword: say("Link sent: check your mail — or type your password.")
    }
    while true {
        let prompt = if case .linkSentOrPassword = route { "Paste the link, type the 6-digit code, or 'pw PASSWORD':" } else { "Paste the link or type the 6-digit code:" }
        guard let entry = ask(prompt), !entry.isEmpty else { return }
        let credentials: Credentials =
            if entry.hasPrefix("pw ") { .password(email: email, password: String(entry.dropFirst(3))) }
            else if entry.count == 6, entry.allSatisfy(\.isNumber) { .emailCode(email: email, code: entry) }
            else { .emailLink(entry, email: email) }
        do {
            let descriptor = try await login(auth, credentials)
            say(describe(descriptor))
            if descriptor.isNewUser, let name = ask("Welcome! What's your name?"), !name.isEmpty {
                try await auth.updateProfile(displayName: .value(name))
            }
            return
        } catch let error as PosternAuthError {
            say("Error: \(error.localizedDescription)")
        }
    }
}

/// Sets the password, confirming who the user is first when the sign-in is not recent. False at
/// the end of input.
func setPassword(_ auth: PosternAuth, _ password: String) async throws(PosternAuthError) -> Bool {
    do throws(PosternAuthError) {
        try await auth.updatePassword(password)
        return true
    } catch {
        guard error == .requiresRecentLogin, let email = auth.user?.email else { throw error }
        say("Confirm it's you first.")
        try await auth.sendSignInLink(to: email)
        guard let code = ask("Type the 6-digit code just mailed:") else { return false }
        try await auth.confirmAuthentication(with: .emailCode(email: email, code: code))
        try await auth.updatePassword(password)
        return true
    }
}

/// The profile screen: view, edit, set a password, sign out.
func profile(_ auth: PosternAuth) async throws -> Bool {
    say("Profile: \(describe(auth.user))")
    let isGuest = auth.user?.isAnonymous == true
    let menu = isGuest ? "[l]ink an email, sign [o]ut, [q]uit:" : "[n]ame, [b]io, [p]assword, sign [o]ut, [q]uit:"
    guard let choice = ask(menu) else { return false }
    do {
        switch choice {
        case "n": if let name = ask("New name:") { try await auth.updateProfile(displayName: name.isEmpty ? .null : .value(name)) }
        case "b":
            if let bio = ask("Bio:") {
                var attributes = auth.user?.attributes ?? [:]
                attributes["bio"] = .string(bio)
                try await auth.updateProfile(attributes: attributes)
            }
        case "p":
            guard let password = ask("New password:") else { return false }
            if !(try await setPassword(auth, password)) { return false }
            say("Password set.")
        case "l": try await welcome(auth)
        case "o": await auth.signOut(); say("Signed out.")
        case "q": return false
        default: say("?")
        }
    } catch let error as PosternAuthError {
        say("Error: \(error.localizedDescription)")
    }
    return true
}

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.index(after: $0) < arguments.endIndex ? arguments[$0 + 1] : nil }
}
guard let server = option("--server").flatMap(URL.init(string:)) else {
    FileHandle.standardError.write(Data("usage: postern-demo --server URL [--state FILE]\n       postern-demo --server URL --apple-story --mint URL --apple-audience BUNDLE_ID [--apple-sub SUB] [--apple-email EMAIL]\n       postern-demo --server URL --solve-challenge\n".utf8))
    exit(64)
}
if arguments.contains("--solve-challenge") {
    // What a send pays when the server asks: GET /v1/challenge, then the proof of work on this machine.
    do {
        let started = ContinuousClock.now
        let payload = try await PosternAuth(serverURL: server, storage: MemorySessionStorage()).solveChallenge()
        let fields = Data(base64Encoded: payload).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        say("challenge-solved number=\(fields["number"] ?? "?") took=\(fields["took"] ?? "?")ms total=\(ContinuousClock.now - started)")
        exit(0)
    } catch {
        say("FAIL solve-challenge: \(error.localizedDescription)")
        exit(69)
    }
}
if arguments.contains("--apple-story") {
    exit(await AppleStory.run(server: server, option: option))
}
let statePath = option("--state") ?? FileManager.default.currentDirectoryPath + "/postern-demo-state.json"
let auth = PosternAuth(serverURL: server, storage: FileSessionStorage(url: URL(fileURLWithPath: statePath)))

do {
    running: while true {
        if auth.user == nil {
            guard let choice = ask("Welcome. [e]mail sign-in, [g]uest, [q]uit:") else { break }
            switch choice {
            case "e": try await welcome(auth)
            case "g": say("Guest: \(describe(try await auth.signInAnonymously()))")
            case "q": break running
            default: say("?")
            }
        } else if !(try await profile(auth)) {
            break
        }
    }
} catch let error as PosternAuthError {
    say("Error: \(error.localizedDescription)")
    exit(69)
}
