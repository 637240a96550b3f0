import Foundation
import PosternAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client of a Postern server: the account lifecycle of RxFireAuth's `UserManagerType` in
/// async/await, and what FUAP's welcome flow needs. One instance per app; the session lives in a
/// `SessionStorage` and survives launches.
///
/// ```swift
/// let auth = PosternAuth(serverURL: URL(string: "https://auth.example.com")!)
/// try await auth.sendSignInLink(to: "ada@example.org")
/// // … the app is opened with the link:
/// let login = try await auth.handle(url)
/// ```
public actor PosternAuth {
    /// How the client reaches the server and keeps its state.
    public struct Configuration: Sendable {
        /// The server's public URL (`--public-url`): the API and the links in mail live there.
        public var serverURL: URL
        /// Where the session is kept (the Keychain on Apple platforms, a file elsewhere).
        public var storage: any SessionStorage
        /// The URLSession the calls go through.
        public var urlSession: URLSession
        /// How long before its expiry an ID token is refreshed.
        public var refreshMargin: TimeInterval
        /// The longest one call may take.
        public var timeout: TimeInterval
        /// Hosts whose `/action` links `canHandle(_:)` accepts (default: the server's host).
        public var linkHosts: Set<String>
        /// Whether a request that sends mail or SMS, refused `challengeRequired(kind: "altcha", …)`,
        /// solves the server's proof of work and is sent once more (default: true; a CAPTCHA is
        /// always thrown, for the app to show). Off: the app solves (`solveChallenge()`) and
        /// passes `challengeSolution:` itself, for example to show progress.
        public var solvesProofOfWork: Bool
        /// The clock (tests move it).
        public var now: @Sendable () -> Date

        public init(
            serverURL: URL, storage: (any SessionStorage)? = nil, urlSession: URLSession = .shared, refreshMargin: TimeInterval = 60,
            timeout: TimeInterval = 30, linkHosts: Set<String>? = nil, solvesProofOfWork: Bool = true,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.solvesProofOfWork = solvesProofOfWork
            self.serverURL = serverURL
            self.storage = storage ?? Self.defaultStorage
            self.urlSession = urlSession
            self.refreshMargin = refreshMargin
            self.timeout = timeout
            self.linkHosts = linkHosts ?? Set([serverURL.host].compactMap { $0?.lowercased() })
            self.now = now
        }

        /// The Keychain where there is one; elsewhere a 0600 file in the user's application
        /// support directory.
        public static var defaultStorage: any SessionStorage {
            #if canImport(Security)
            return KeychainSessionStorage()
            #else
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share")
            return FileSessionStorage(url: base.appendingPathComponent("postern/session.json"))
            #endif
        }
    }

    let configuration: Configuration
    let transport: APITransport
    var state: DeviceState
    private let broadcast: UserBroadcast
    /// The refresh under way and the refresh token it spends.
    private var refreshing: (task: Task<SessionBody, any Error>, token: String)?

    /// A client with `configuration`; reads the stored session (a storage that cannot be read
    /// starts signed out).
    public init(configuration: Configuration) {
        self.configuration = configuration
        transport = APITransport(baseURL: configuration.serverURL, session: configuration.urlSession, timeout: configuration.timeout)
        let stored = (try? configuration.storage.load()) ?? DeviceState()
        state = stored
        broadcast = UserBroadcast(stored.session == nil ? nil : stored.user)
    }

    /// A client of the server at `serverURL`, keeping its session in the platform's default storage.
    public init(serverURL: URL, storage: (any SessionStorage)? = nil) {
        self.init(configuration: Configuration(serverURL: serverURL, storage: storage))
    }

    // MARK: State

    /// The signed-in user, nil when nobody is.
    public nonisolated var user: User? { broadcast.user }

    /// The current user now, then every change of profile, session or sign-in state (nil when
    /// signed out) — RxFireAuth's `autoupdatingUser`.
    public nonisolated var userUpdates: AsyncStream<User?> { broadcast.stream() }

    /// Whether someone (anonymous or not) is signed in on this device.
    public var isSignedIn: Bool { state.session != nil }

    /// The address last used to sign in on this device (FUAP pre-fills it).
    public var lastEmail: String? { state.lastEmail }

    // MARK: Tokens

    /// An ID token for the app's own backend, refreshed first when it expires within
    /// `refreshMargin`. Concurrent callers share one refresh.
    /// - Throws: `.notSignedIn`; `.tokenRevoked` or `.invalidRefreshToken` after signing out
    ///   (the session was ended elsewhere); `.network` and server failures.
    public func idToken(forceRefresh: Bool = false) async throws(PosternAuthError) -> String {
        guard let session = state.session else { throw .notSignedIn }
        if !forceRefresh, refreshing == nil, session.expiresAt.timeIntervalSince(configuration.now()) > configuration.refreshMargin {
            return session.idToken
        }
        return try await refresh().idToken
    }

    /// Refreshes the session, or joins the refresh under way. A refresh that ends after the
    /// session changed (a sign-in, a sign-out) changes nothing.
    private func refresh() async throws(PosternAuthError) -> StoredSession {
        let running: (task: Task<SessionBody, any Error>, token: String)
        if let refreshing {
            running = refreshing
        } else {
            guard let session = state.session else { throw .notSignedIn }
            let transport = transport
            let task = Task {
                try await transport.send("POST", "/v1/token", body: RefreshTokenBody(refreshToken: session.refreshToken), as: SessionBody.self)
            }
            running = (task, session.refreshToken)
            refreshing = running
        }
        let result = await running.task.result
        let stillCurrent = state.session?.refreshToken == running.token
        if refreshing?.token == running.token { refreshing = nil }
        switch result {
        case .success(let body):
            if stillCurrent { adopt(body) }
        case .failure(let error):
            let failure = error as? PosternAuthError ?? .network(reason: "\(error)")
            if stillCurrent, failure == .tokenRevoked || failure == .invalidRefreshToken { endSession() }
            throw failure
        }
        guard let current = state.session else { throw .notSignedIn }
        return current
    }

    /// Calls an endpoint that takes the ID token; when the server refuses the token, refreshes
    /// once and tries again.
    func authorized<Answer: Decodable & Sendable>(
        _ method: String, _ path: String, body: (some Encodable & Sendable)?, as type: Answer.Type
    ) async throws(PosternAuthError) -> Answer {
        let token = try await idToken()
        do {
            return try await transport.send(method, path, body: body, bearer: token, as: type)
        } catch .invalidIDToken {
            return try await transport.send(method, path, body: body, bearer: try await idToken(forceRefresh: true), as: type)
        }
    }

    // MARK: Session bookkeeping

    /// Takes `body` as the session and stores it.
    func adopt(_ body: SessionBody) {
        state.session = StoredSession(
            uid: body.uid, idToken: body.idToken, refreshToken: body.refreshToken,
            expiresAt: configuration.now().addingTimeInterval(TimeInterval(body.expiresIn)), isAnonymous: body.isAnonymous,
            email: body.email)
        if let email = body.email { state.lastEmail = email }
        persist()
    }

    /// Makes `user` the current profile.
    func setUser(_ user: User?) {
        state.user = user
        persist()
        broadcast.publish(user)
    }

    /// Forgets the session on this device (the server side is the caller's business).
    func endSession() {
        state.session = nil
        refreshing = nil
        setUser(nil)
    }

    /// Writes the state; a storage that fails keeps the session for this run only.
    func persist() {
        try? configuration.storage.save(state)
    }
}
