import PosternCore
import PosternCrypto

/// The flows (``AuthService``) over a store, on a manual clock: what a flow relies on the store
/// for, checked through the flow.
public struct FlowHarness: Sendable {
    /// The store under test.
    public let store: any Store
    /// The flows' clock, moved by the test.
    public let clock = ManualClock()
    /// The flows.
    public let service: AuthService

    /// Flows over `store`, their keys sealed by `box` (nil: a fixed test key), mail unlimited
    /// unless `configure` says otherwise.
    /// `hookHTTP`: the hooks' client, when `configure` turns hooks on.
    public init(
        _ store: any Store, box: SecretBox? = nil, hookHTTP: (any HookHTTP)? = nil, configure: (inout AuthConfiguration) -> Void = { _ in }
    ) throws {
        self.store = store
        let box = try box ?? SecretBox(key: Array(repeating: 5, count: 32))
        let vault = KeyVault(store: store, box: box, clock: clock, maxCodeLifetime: 7 * 86_400, rsaKeys: .madeOncePerProcess)
        var config = AuthConfiguration(publicURL: "https://auth.example.com", allowedContinueHosts: ["app.example.com"])
        config.mailInterval = 0
        config.mailPerHour = 0
        configure(&config)
        service = try AuthService(
            store: store, keys: try KeyRingCache(vault: vault, clock: clock), clock: clock, config: config, hasher: .fastForTests,
            hookHTTP: hookHTTP)
    }

    /// The newest queued message composes to a mail without a link.
    public struct NoLink: Error {}

    /// Runs the content stage on the newest queued message and returns its link.
    public func lastLink() throws -> String {
        let newest = try requireContract(try store.read { try $0.outboxMessages(state: nil, limit: 1) }.first, "a queued message")
        let composed = try requireContract(try service.mailComposer.compose(newest.intent, recipient: newest.recipient), "a composed mail")
        switch composed.message.content {
        case .signIn(let link, _, _), .confirmSignUp(let link, _), .resetPassword(let link, _), .verifyEmail(let link, _),
            .verifyAndChangeEmail(let link, _, _, _), .recoverEmail(let link, _, _, _), .accountAlreadyExists(let link, _, _):
            return link
        default:
            throw NoLink()
        }
    }
}
