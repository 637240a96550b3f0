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
        #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row(encoded)) }
    }

    @Test("the strongest hash --scrypt-log-n makes (ln 20, r 8) still imports")
    func strongestOwnHashImports() throws {
        let encoded = "$scrypt$ln=20,r=8,p=1$\(Self.salt)$\(Self.hash)"
        #expect(PasswordHasher.isHash(encoded))
        #expect(try PosternExport.account(Self.row(encoded)).passwordHash == encoded)
        let made = try PasswordHasher(logN: 10, blockSize: 8, parallelism: 1).hash("pw-123456")
        #expect(try PosternExport.account(Self.row(made)).passwordHash == made)
    }

    @Test("bcrypt above cost 16 is no bcrypt hash to Postern (days a check at 31); 16 and below are")
    func bcryptCost() throws {
        let body = "$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
        for cost in ["04", "10", "16"] { #expect(Bcrypt.isHash("$2b$\(cost)\(body)"), "cost \(cost)") }
        for cost in ["17", "20", "31"] {
            #expect(!Bcrypt.isHash("$2b$\(cost)\(body)"), "cost \(cost)")
            #expect(throws: ImportProblem.self) { _ = try PosternExport.account(Self.row("$2b$\(cost)\(body)")) }
        }
    }
}
