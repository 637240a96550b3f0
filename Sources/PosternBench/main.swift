import Foundation
import PosternCore
import PosternCrypto

/// Benchmarks that need Postern's own code, run by the scripts in bench/. Prints key=value pairs.
///
/// `postern-bench codes [seconds]`: action-code mints and verifies per second on one thread.
/// `postern-bench outbox-queue|outbox-run …`: the outbox end to end (see OutboxBench.swift).
/// `postern-bench links INPUTS SECONDS`: pasted-link parsing (see LinksBench.swift).
/// `postern-bench challenge KEY DIFFICULTY COUNT SECONDS PAYLOADS`: the proof of work (see ChallengeBench.swift).
/// `postern-bench users DB COUNT`: the admin user list's pages on COUNT accounts (see UsersBench.swift).
let arguments = CommandLine.arguments.dropFirst()
guard let which = arguments.first else {
    FileHandle.standardError.write(Data("usage: postern-bench codes [seconds] | challenge KEY DIFFICULTY COUNT SECONDS PAYLOADS | enumeration … | links INPUTS SECONDS | outbox-queue … | outbox-run … | users DB COUNT\n".utf8))
    exit(64)
}

func measure(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
    var count = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds * 1e9)
    var now = start
    while now < deadline {
        for _ in 0..<1000 { try body() }
        count += 1000
        now = DispatchTime.now().uptimeNanoseconds
    }
    return Double(count) / (Double(now - start) / 1e9)
}

switch which {
case "codes":
    let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 3
    let authority = ActionCodeAuthority(active: try .init(id: 1, secret: SecureRandom.bytes(32)), retired: [])
    let binding = StateBinding("uid", "someone@example.com", "$scrypt$hash")
    let now: Int64 = 1_800_000_000
    var sink = 0
    let mints = try measure(seconds: seconds) {
        sink &+= try authority.mint(.resetPassword, binding: binding, ttl: 3600, now: now).text.utf8.count
    }
    let codes = try (0..<1024).map { _ in try authority.mint(.resetPassword, binding: binding, ttl: 3600, now: now).text }
    var index = 0
    let verifies = try measure(seconds: seconds) {
        let code = try authority.verify(codes[index & 1023], expecting: .resetPassword, binding: binding, now: now)
        sink &+= Int(code.keyID)
        index &+= 1
    }
    print("mint_per_s=\(Int(mints)) verify_per_s=\(Int(verifies)) sink=\(sink & 1)")
case "enumeration":
    try EnumerationBench.run(arguments.dropFirst())
case "enumeration-seed":
    try EnumerationBench.seed(arguments.dropFirst())
case "challenge":
    do {
        try ChallengeBench.run(arguments.dropFirst())
    } catch {
        FileHandle.standardError.write(Data("postern-bench challenge: \(error)\n".utf8))
        exit(1)
    }
case "links":
    do {
        try LinksBench.run(arguments.dropFirst())
    } catch {
        FileHandle.standardError.write(Data("postern-bench links: \(error)\n".utf8))
        exit(1)
    }
case "outbox-queue", "outbox-run":
    do {
        if which == "outbox-queue" { try OutboxBench.queue(arguments.dropFirst()) } else { try OutboxBench.run(arguments.dropFirst()) }
    } catch {
        FileHandle.standardError.write(Data("postern-bench \(which): \(error)\n".utf8))
        exit(64)
    }
case "users":
    do {
        try UsersBench.run(arguments.dropFirst())
    } catch {
        FileHandle.standardError.write(Data("postern-bench users: \(error) (usage: users DB COUNT, COUNT at least 1000)\n".utf8))
        exit(1)
    }
default:
    FileHandle.standardError.write(Data("postern-bench: unknown benchmark \(which)\n".utf8))
    exit(64)
}
