import PosternCore
import Testing

/// Without `--public-url` the links point at the address `--listen` binds, where they pointed at
/// 127.0.0.1:8080 whatever `--listen` said (mail from a daemon on :9090 linked to a closed port).
@Suite("The default public URL")
struct PublicURLDefaultTests {
    @Test("without --public-url the links take --listen's host and port", arguments: [
        ("127.0.0.1:9090", "http://127.0.0.1:9090", true),
        ("0.0.0.0:8081", "http://127.0.0.1:8081", false),
        ("[::]:8082", "http://[::1]:8082", false),
        ("localhost:8083", "http://localhost:8083", true),
        ("10.1.2.3:80", "http://10.1.2.3:80", false),
    ])
    func derivedFromListen(listen: String, publicURL: String, loopback: Bool) throws {
        let fromFlag = try Settings.resolve(flags: ["listen": listen], environment: [:], file: [:])
        #expect(fromFlag.publicURL == publicURL)
        #expect(fromFlag.publicURLFromListen)
        #expect(fromFlag.listensOnLoopbackOnly == loopback)
        #expect(fromFlag.effectiveContinueHosts.count == 1)
        let fromEnvironment = try Settings.resolve(flags: [:], environment: ["POSTERN_LISTEN": listen], file: [:])
        #expect(fromEnvironment.publicURL == publicURL)
    }

    @Test("the defaults still link to http://127.0.0.1:8080")
    func defaults() throws {
        let settings = try Settings.resolve(flags: [:], environment: [:], file: [:])
        #expect(settings.publicURL == "http://127.0.0.1:8080")
        #expect(settings.publicURLFromListen)
    }

    @Test("a given --public-url wins, from a flag, the environment or the file")
    func explicitWins() throws {
        let flag = try Settings.resolve(flags: ["listen": "0.0.0.0:9090", "public-url": "https://auth.example.com/"], environment: [:], file: [:])
        #expect(flag.publicURL == "https://auth.example.com")
        #expect(!flag.publicURLFromListen)
        let environment = try Settings.resolve(
            flags: ["listen": "127.0.0.1:9090"], environment: ["POSTERN_PUBLIC_URL": "http://127.0.0.1:8080"], file: [:])
        #expect(environment.publicURL == "http://127.0.0.1:8080")
        let file = try Settings.resolve(flags: ["listen": "127.0.0.1:9090"], environment: [:], file: ["public-url": "https://a.example"])
        #expect(file.publicURL == "https://a.example")
    }
}
