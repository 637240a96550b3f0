import Foundation
import PosternCrypto
import Testing

@testable import PosternCore

/// An import file cannot make a sign-in stall or kill the daemon: a hash asking for more work or
/// memory than Postern's own strongest setting is refused at import, naming why, and never verified.
@Suite("Imported password hashes: costs within bounds")
struct ImportHashBoundsTests {
    static func row(_ hash: String) -> [String: Any] {
        ["uid": "u1", "email": "a@example.com", "emailVerified": true, "disabled": false, "createdAt": 1, "passwordHash": hash]
    }

    static let salt = "c2FsdHNhbHRzYWx0c2FsdA"
    static let hash = "aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"

    @Test("scrypt past ln 20, r 16, p 4 or 1 GiB is refused at import and by the verifier; Postern's strongest is kept", arguments: [
        "ln=24,r=64,p=16", "ln=21,r=8,p=1", "ln=20,r=16,p=1", "ln=14,r=17,p=1", "ln=14,r=8,p=5",
    ])
    func scryptOutOfBounds(_ parameters: String) throws {
        let encoded = "$scrypt$\(parameters)$\(Self.salt)$\(Self.hash)"
        #expect(!PasswordHasher.isHash(encoded))
        #expect(throws: CryptoError.self) { try PasswordHasher.verify("x", against: encoded) }
        #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row(encoded), costBound: .standard) }
    }

    @Test("the service's own hash imports; a scrypt costing more than it (N·r·p, memory) is refused, naming the field and the bound")
    func scryptAboveOwnCost() throws {
        let own = "$scrypt$ln=15,r=8,p=1$\(Self.salt)$\(Self.hash)"
        #expect(try PosternExport.account(Self.row(own), costBound: .standard).passwordHash == own)
        let sameWork = "$scrypt$ln=16,r=4,p=1$\(Self.salt)$\(Self.hash)"
        #expect(try PosternExport.account(Self.row(sameWork), costBound: .standard).passwordHash == sameWork)
        for parameters in ["ln=16,r=8,p=1", "ln=15,r=8,p=2", "ln=20,r=8,p=1", "ln=15,r=16,p=1"] {
            let encoded = "$scrypt$\(parameters)$\(Self.salt)$\(Self.hash)"
            let problem = #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row(encoded), costBound: .standard) }
            #expect(problem?.reason.contains("passwordHash") == true && problem?.reason.contains("2^18") == true, "\(problem?.reason ?? "")")
        }
        // An operator who chose --scrypt-log-n 20 made such hashes himself: they move with him.
        let strongest = "$scrypt$ln=20,r=8,p=1$\(Self.salt)$\(Self.hash)"
        let twenty = PasswordCostBound(own: PasswordHasher(logN: 20, blockSize: 8, parallelism: 1))
        #expect(try PosternExport.account(Self.row(strongest), costBound: twenty).passwordHash == strongest)
        let made = try PasswordHasher(logN: 10, blockSize: 8, parallelism: 1).hash("pw-123456")
        #expect(try PosternExport.account(Self.row(made), costBound: .standard).passwordHash == made)
    }

    @Test("bcrypt above 16 is no bcrypt hash to Postern (days a check at 31); 16 and below are")
    func bcryptShape() throws {
        let body = "$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
        for cost in ["04", "10", "16"] { #expect(Bcrypt.isHash("$2b$\(cost)\(body)"), "cost \(cost)") }
        for cost in ["17", "20", "31"] {
            #expect(!Bcrypt.isHash("$2b$\(cost)\(body)"), "cost \(cost)")
            #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row("$2b$\(cost)\(body)"), costBound: .standard) }
        }
    }

    @Test("bcrypt above cost 10 (one more per --scrypt-log-n step above 15) is refused at import, from Postern and Supabase files")
    func bcryptAboveOwnCost() throws {
        let body = "$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
        for cost in ["04", "10"] {
            #expect(try PosternExport.account(Self.row("$2b$\(cost)\(body)"), costBound: .standard).passwordHash != nil)
        }
        for cost in ["11", "12", "16"] {
            let problem = #expect(throws: ImportProblem.self) {
                _ = try PosternExport.account(Self.row("$2b$\(cost)\(body)"), costBound: .standard)
            }
            #expect(problem?.reason.contains("passwordHash") == true && problem?.reason.contains("10") == true, "\(problem?.reason ?? "")")
        }
        let seventeen = PasswordCostBound(own: PasswordHasher(logN: 17, blockSize: 8, parallelism: 1))
        #expect(try PosternExport.account(Self.row("$2b$12\(body)"), costBound: seventeen).passwordHash != nil)
        #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row("$2b$13\(body)"), costBound: seventeen) }
        let csv = """
            id,email,encrypted_password,email_confirmed_at,created_at
            5b1f7a34-0000-4000-8000-000000000001,a@example.com,$2a$16\(body),2024-01-02 03:04:05+00,2024-01-01 00:00:00+00
            5b1f7a34-0000-4000-8000-000000000002,b@example.com,$2a$10\(body),2024-01-02 03:04:05+00,2024-01-01 00:00:00+00
            """
        let rows = ExportReader(source: .supabase, now: 0).rows(Data(csv.utf8))
        guard case .failure(let problem) = rows[0].content else {
            Issue.record("a bcrypt cost 16 row from Supabase was accepted")
            return
        }
        #expect(problem.reason.contains("encrypted_password"), "\(problem.reason)")
        #expect((try? rows[1].content.get()) != nil)
    }

    @Test("a Firebase hash past Firebase's own rounds 8 / mem cost 14 is refused, naming the bound")
    func firebaseBounds() throws {
        let within = "$firebase-scrypt$k=1,r=8,m=14,s=Bw$\(Self.salt)$\(Self.hash)"
        #expect(try PosternExport.account(Self.row(within), costBound: .standard).passwordHash == within)
        for parameters in ["k=1,r=8,m=15", "k=1,r=9,m=14", "k=1,r=64,m=24"] {
            let encoded = "$firebase-scrypt$\(parameters),s=Bw$\(Self.salt)$\(Self.hash)"
            let problem = #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row(encoded), costBound: .standard) }
            #expect(problem?.reason.contains("14") == true, "\(problem?.reason ?? "")")
        }
    }
}
