import PosternCore
@testable import PosternServer
import Testing

@Suite("Request deadlines")
struct RequestDeadlinesTests {
    private let second: UInt64 = 1_000_000_000

    @Test("a request that has not arrived whole by the deadline is cut once")
    func cutsLate() {
        let deadlines = RequestDeadlines(timeoutSeconds: 10)
        _ = deadlines.opened(socket: 7, now: 100 * second)
        var cut: [Int32] = []
        #expect(deadlines.cutOverdue(at: 109 * second) { cut.append($0) } == 0)
        #expect(deadlines.cutOverdue(at: 110 * second) { cut.append($0) } == 1)
        #expect(cut == [7])
        #expect(deadlines.cutOverdue(at: 200 * second) { cut.append($0) } == 0)
    }

    @Test("a request being answered has no deadline; the next one starts its clock at the answer")
    func answeringAndKeepAlive() {
        let deadlines = RequestDeadlines(timeoutSeconds: 10)
        let connection = deadlines.opened(socket: 8, now: 0)
        connection.answering()
        #expect(deadlines.cutOverdue(at: 1000 * second) { _ in } == 0)
        connection.awaitRequest(now: 1000 * second, timeout: deadlines.timeout)
        #expect(deadlines.cutOverdue(at: 1009 * second) { _ in } == 0)
        #expect(deadlines.cutOverdue(at: 1010 * second) { _ in } == 1)
    }

    @Test("a closed connection's socket is never cut (it may be reused)")
    func closedIsForgotten() {
        let deadlines = RequestDeadlines(timeoutSeconds: 1)
        let first = deadlines.opened(socket: 9, now: 0)
        _ = deadlines.opened(socket: 10, now: 0)
        deadlines.closed(first)
        var cut: [Int32] = []
        deadlines.cutOverdue(at: 5 * second) { cut.append($0) }
        #expect(cut == [10])
        #expect(deadlines.count == 1)
    }

    @Test("stop without start returns")
    func stopWithoutStart() {
        RequestDeadlines(timeoutSeconds: 1).stop()
    }
}

@Suite("Connection budget")
struct ConnectionBudgetTests {
    @Test("the limit leaves room for the store, SMTP and the polling threads, within the ceiling")
    func sizing() {
        #expect(ConnectionBudget.connections(fileDescriptors: 1024, deliveryWorkers: 4, pollingThreads: 16) == 1024 - 256 - 16 - 64)
        #expect(ConnectionBudget.connections(fileDescriptors: 1_048_576, deliveryWorkers: 4, pollingThreads: 16) == ConnectionBudget.ceiling)
        #expect(ConnectionBudget.connections(fileDescriptors: 100, deliveryWorkers: 4, pollingThreads: 16) == 16)
    }

    @Test("the soft descriptor limit ends at the hard one")
    func raised() {
        let result = ConnectionBudget.raiseFileDescriptorLimit()
        #expect(result.limit >= result.before)
    }
}

@Suite("Hardening settings")
struct HardeningSettingsTests {
    @Test("defaults: 64 per IP, 10 s per request, metrics on loopback 9464, no trusted proxies")
    func defaults() throws {
        let s = try Settings.resolve(flags: [:], environment: [:], file: [:])
        #expect(s.connectionsPerIP == 64 && s.requestTimeout == 10)
        #expect(s.metricsListen == "127.0.0.1:9464" && s.trustedProxies.isEmpty)
    }

    @Test("flags and environment are read; off disables the metrics listener")
    func parsed() throws {
        let s = try Settings.resolve(
            flags: ["connections-per-ip": "0", "metrics-listen": "off"],
            environment: ["POSTERN_REQUEST_TIMEOUT": "3", "POSTERN_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8,"], file: [:])
        #expect(s.connectionsPerIP == 0 && s.requestTimeout == 3 && s.metricsListen == nil)
        #expect(s.trustedProxies == ["10.0.0.0/8", "fd00::/8"])
    }

    @Test("bad values name the setting", arguments: [
        (["metrics-listen": "9464"], "--metrics-listen"), (["request-timeout": "0"], "--request-timeout"),
        (["connections-per-ip": "-1"], "--connections-per-ip"),
    ])
    func refused(flags: [String: String], name: String) {
        #expect(throws: SettingsError.self) { try Settings.resolve(flags: flags, environment: [:], file: [:]) }
        do {
            _ = try Settings.resolve(flags: flags, environment: [:], file: [:])
        } catch {
            #expect(error.message.contains(name))
        }
    }
}
