import Foundation
import PosternCore

/// The challenge (``ChallengeGate``) over each store, through the flows: a solution is recorded
/// in the database, so two daemons on it accept it once between them, concurrent requests with
/// one solution queue one mail, and when-limited counts an IP across daemons.
enum ChallengeContract {
    static func harness(_ store: any Store, _ mode: ChallengeMode, ipPerHour: Int64 = 0) throws -> FlowHarness {
        try FlowHarness(store) {
            $0.challenge = ChallengeConfiguration(mode: mode, difficulty: 1_000, ipPerHour: ipPerHour)
        }
    }

    /// A solved proof of work of `h`'s gate.
    static func solution(_ h: FlowHarness) throws -> String {
        guard case .proofOfWork(let challenge) = try h.service.challenges.offer(), let payload = ProofOfWorkSolver.payload(challenge) else {
            throw StoreContractFailure("the gate offered no proof of work", file: #fileID, line: #line)
        }
        return payload
    }

    /// Sends a sign-in link; the error's code when refused.
    static func send(_ h: FlowHarness, _ email: String, ip: String = "203.0.113.7", solution: String? = nil) -> String? {
        do {
            try h.service.emailLink.send(EmailLinkRequest(email: email, challengePass: try h.service.challenges.check(solution: solution, clientIP: ip)))
        } catch {
            return error.code
        }
        return nil
    }

    static func queued(_ store: any Store) throws -> Int {
        try store.read { try $0.outboxMessages(state: nil, limit: 1_000) }.count
    }

    static let cases: [StoreContractCase] = [
        StoreContractCase("challenge", "two daemons on one database accept a solution once between them; without one both ask") { store in
            let a = try harness(store, .always)
            let b = try harness(store, .always)
            let solution = try solution(a)
            try expectContract(send(b, "x@example.com") == "CHALLENGE_REQUIRED")
            try expectContract(send(a, "x@example.com", solution: solution) == nil)
            try expectContract(send(b, "y@example.com", solution: solution) == "CHALLENGE_REQUIRED")
            try expectContract(try queued(store) == 1)
        },
        StoreContractCase("challenge", "20 concurrent requests with one solution: exactly one mail queued") { store in
            let h = try harness(store, .always)
            let solution = try solution(h)
            let refused = Counter()
            DispatchQueue.concurrentPerform(iterations: 20) { i in
                if send(h, "racer\(i)@example.com", solution: solution) == "CHALLENGE_REQUIRED" { refused.increment() }
            }
            try expectContract(try queued(store) == 1)
            try expectContract(refused.value == 19)
        },
        StoreContractCase("challenge", "when-limited counts a client IP across two daemons") { store in
            let a = try harness(store, .whenLimited, ipPerHour: 2)
            let b = try harness(store, .whenLimited, ipPerHour: 2)
            try expectContract(send(a, "one@example.com") == nil)
            try expectContract(send(b, "two@example.com") == nil)
            try expectContract(send(a, "three@example.com") == "CHALLENGE_REQUIRED")
            try expectContract(send(b, "three@example.com") == "CHALLENGE_REQUIRED")
            try expectContract(send(b, "three@example.com", ip: "203.0.113.8") == nil)
        },
    ]
}
