import Foundation
import PosternCore
import PosternCrypto
import PosternMail
import PosternStore
import Synchronization

/// `postern-bench outbox-queue` and `outbox-run`: drive the real outbox (SQLite store, worker pool,
/// transports, templates) for the integration tests and `bench/smtp`.
///
/// - `outbox-queue --database DB --count N [--to PREFIX] [--domain D] [--give-up-in S]`: queues N
///   sign-in intents for PREFIX0@D … PREFIX(N-1)@D in one transaction.
/// - `outbox-run --database DB [--smtp-url URL] [--smtp-ca-file F] [--smtp-password-file F]
///   [--allow-private-targets CIDR,…] (an HTTP provider on loopback needs it, as the daemon does) [--workers 4] [--batch 64] [--base-delay 30] [--max-delay 3600] [--lease 150] [--poll 1] [--timeout 600] [--templates DIR] [--kind sign-in|password-changed] [--then-queue N]`:
///   runs the pool until no message is unfinished, then prints the counts and the rate. With
///   `--then-queue N` it then queues N more in this process and measures how soon wake() has them
///   delivered. SIGTERM stops it gracefully (exit 0 when no lease is left behind).
enum OutboxBench {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func options(_ arguments: ArraySlice<String>) throws -> [String: String] {
        var options: [String: String] = [:]
        var iterator = arguments.makeIterator()
        while let key = iterator.next() {
            guard key.hasPrefix("--"), let value = iterator.next() else { throw UsageError(description: "expected --name value, got \(key)") }
            options[String(key.dropFirst(2))] = value
        }
        return options
    }

    static func number(_ options: [String: String], _ key: String, _ fallback: Int64) throws -> Int64 {
        guard let text = options[key] else { return fallback }
        guard let value = Int64(text) else { throw UsageError(description: "--\(key) must be a whole number") }
        return value
    }

    static func queue(_ arguments: ArraySlice<String>) throws {
        let options = try options(arguments)
        let store = try SQLiteStore(path: options["database"] ?? "./postern.db")
        let count = try number(options, "count", 1)
        let prefix = options["to"] ?? "user"
        let domain = options["domain"] ?? "example.com"
        let giveUpIn = try number(options, "give-up-in", 600)
        let recipients = try (0..<count).map { try EmailAddress.parse("\(prefix)\($0)@\(domain)") }
        let now = SystemClock().unixSeconds()
        let started = Date()
        try store.write { writer in
            for (index, recipient) in recipients.enumerated() {
                _ = try writer.enqueue(.signIn(requestID: "bench-\(prefix)-\(index)"), recipient: recipient, now: now, giveUpAt: now + giveUpIn)
            }
        }
        print("queued=\(count) seconds=\(String(format: "%.3f", Date().timeIntervalSince(started)))")
    }

    static func run(_ arguments: ArraySlice<String>) throws {
        let options = try options(arguments)
        let store = try SQLiteStore(path: options["database"] ?? "./postern.db")
        let config = try MailTransportConfig.parse(
            url: options["smtp-url"], caFile: options["smtp-ca-file"], passwordFile: options["smtp-password-file"],
            signingSecretFile: options["mail-http-secret-file"])
        let targets = TargetAddressPolicy(allowing: try IPNetwork.list(options["allow-private-targets"] ?? ""))
        let factory = try config.transportFactory(targets: targets)
        let templates = URL(fileURLWithPath: options["templates"] ?? "templates", isDirectory: true)
        let renderer = try TemplateDirectory.load(templates).renderer(branding: Branding(appName: "Postern Bench"))
        let from = try MailMailbox.parse(options["mail-from"] ?? "Postern <no-reply@example.com>")
        let clock = SystemClock()
        let kind = options["kind"] ?? "sign-in"
        guard kind == "sign-in" || kind == "password-changed" else { throw UsageError(description: "--kind must be sign-in or password-changed") }
        let tally = Tally()
        let compose = OutboxWorkerPool.composingEach { message in
            let now = clock.now()
            let link = "https://auth.example.com/action?mode=signIn&oobCode=bench-\(message.id)"
            let content =
                kind == "sign-in"
                ? MailContent.signIn(link: link, code: String(format: "%06d", message.id % 1_000_000), expiresAt: now.addingTimeInterval(600))
                : MailContent.passwordChanged(resetLink: link)
            let mail = MailMessage(content: content, recipient: message.recipient, requestedAt: now)
            let token = Base64URL.encode(try SecureRandom.bytes(16))
            let outgoing = try renderer.compose(mail, preferences: [nil], now: now, from: from, messageIDToken: token)
            tally.bytes.add(outgoing.bytes.count, ordering: .relaxed)
            tally.count.add(1, ordering: .relaxed)
            return outgoing
        }
        let policy = DeliveryPolicy(
            baseDelay: try number(options, "base-delay", 30), maximumDelay: try number(options, "max-delay", 3_600),
            lease: try number(options, "lease", 150))
        let configuration = OutboxWorkerPool.Configuration(
            workers: Int(try number(options, "workers", 4)), policy: policy, batchSize: Int(try number(options, "batch", 64)),
            pollInterval: Double(options["poll"] ?? "1") ?? 1)
        let logger = Logger(label: "outbox", level: .info) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        let pool = OutboxWorkerPool(store: store, transport: factory, compose: compose, configuration: configuration, logger: logger)
        let timeout = Double(try number(options, "timeout", 600))
        // SIGTERM stops the pool gracefully, as `postern serve` does.
        let terminated = Tally()
        signal(SIGTERM, SIG_IGN)
        let termination = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        termination.setEventHandler { terminated.count.store(1, ordering: .relaxed) }
        termination.resume()
        let stopping = { terminated.count.load(ordering: .relaxed) != 0 }

        let started = Date()
        pool.start()
        pool.wake()
        func drain(until deadline: Date) throws {
            // Counting walks the due index, so look less often while much is left.
            while case let left = try store.read({ try $0.outboxUnfinishedCount() }), left > 0, Date() < deadline, !stopping() {
                Thread.sleep(forTimeInterval: min(0.1, max(0.005, Double(left) / 50_000)))
            }
        }
        try drain(until: started.addingTimeInterval(timeout))
        let elapsed = Date().timeIntervalSince(started)
        var extra = ""
        if let later = options["then-queue"].flatMap(Int.init), later > 0, !stopping() {
            // Mail queued in this process after the queue ran dry: wake() delivers it without
            // waiting for the next poll (run with a long --poll to see it).
            let now = clock.unixSeconds()
            let queuedAt = Date()
            try store.write { writer in
                for index in 0..<later {
                    _ = try writer.enqueue(
                        .signIn(requestID: "later-\(index)"), recipient: try EmailAddress.parse("later\(index)@example.com"), now: now,
                        giveUpAt: now + 600)
                }
            }
            pool.wake()
            try drain(until: queuedAt.addingTimeInterval(timeout))
            extra = " wake_latency_ms=\(Int(Date().timeIntervalSince(queuedAt) * 1000))"
        }
        let stopped = pool.stop()
        let counts = try store.read { try $0.outboxCounts() }
        let finished = counts[.sent] + counts[.dead]
        let composed = tally.count.load(ordering: .relaxed)
        let averageSize = composed == 0 ? 0 : tally.bytes.load(ordering: .relaxed) / composed
        print(
            "\(counts) elapsed=\(String(format: "%.3f", elapsed)) per_s=\(String(format: "%.0f", Double(finished) / max(elapsed, 0.001)))"
                + " bytes_per_message=\(averageSize)" + extra + (stopping() ? " terminated=1" : ""))
        if stopping() { exit(stopped && counts[.claimed] == 0 ? 0 : 1) }
        if counts.unfinished > 0 { exit(1) }
    }
}

/// What the bench's content stage composed: messages and bytes.
final class Tally: Sendable {
    let bytes = Atomic<Int>(0)
    let count = Atomic<Int>(0)
}
