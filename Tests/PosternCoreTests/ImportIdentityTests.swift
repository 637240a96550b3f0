import Foundation
import PosternTestSupport
import Testing

@testable import PosternCore

/// Accounts move with the identity providers' subjects linked to them (issue 46): `users export`
/// writes them, `import --from postern` restores them, and `import --from firebase` links each
/// Google and Apple sign-in of `providerUserInfo`. An identity another account holds is never
/// moved: the row is a conflict.
@Suite("Imported identities: Sign in with Apple and Google move with their accounts")
struct ImportIdentityTests {
    static let ada = EmailAddress.restored(localPart: "Ada", domain: "example.com")

    static func provider(_ name: String) throws -> Provider { try #require(Provider(rawValue: name)) }

    /// The account's `providers`, by name, sorted.
    static func providers(_ store: InMemoryStore, _ uid: String) throws -> [String]? {
        try store.read { try $0.account(uid: uid) }?.providers.map(\.rawValue).sorted()
    }

    static func identity(
        _ provider: String, _ subject: String, uid: String, email: EmailAddress?, verified: Bool, created: Int64 = 1_600_000_100,
        used: Int64 = 1_700_000_000
    ) -> ProviderIdentityLink {
        ProviderIdentityLink(
            provider: provider, subject: subject, uid: uid, email: email, emailVerified: verified, createdAt: created, lastUsedAt: used)
    }

    /// The accounts and identities of `store`, for comparing two stores.
    static func contents(_ store: InMemoryStore) throws -> [String: (Account, [ProviderIdentityLink])] {
        try store.read { tx in
            var all: [String: (Account, [ProviderIdentityLink])] = [:]
            for account in try tx.accounts(after: nil, limit: 100) { all[account.uid] = (account, try tx.providerIdentities(uid: account.uid)) }
            return all
        }
    }

    /// `store`'s accounts as `users export` writes them.
    static func export(_ store: InMemoryStore) throws -> String {
        try store.read { tx in
            try tx.accounts(after: nil, limit: 100).map { PosternExport.line($0, identities: try tx.providerIdentities(uid: $0.uid)) }
        }.joined(separator: "\n")
    }

    static func importFile(_ text: String, from source: ImportSource, into store: InMemoryStore, dryRun: Bool = false) throws -> ImportSummary {
        try AccountImporter(store: store, batchSize: 2).run(ExportReader(source: source, now: 1_750_000_000).rows(Data(text.utf8)), dryRun: dryRun)
    }

    @Test("export then import --from postern restores every account with its identities, field for field")
    func posternRoundTrip() throws {
        let source = InMemoryStore()
        let relay = EmailAddress.restored(localPart: "x7fk2", domain: "privaterelay.appleid.com")
        let links = [
            Self.identity("google", "108517425519432107357", uid: "ada", email: Self.ada, verified: true),
            Self.identity("apple", "001234.8f3c2b7e9a1d4c5f.1234", uid: "ada", email: relay, verified: false, created: 1_600_000_200, used: 1_650_000_000),
            Self.identity("oidc:corp", "ada@corp", uid: "ada", email: nil, verified: false),
            Self.identity("apple", "000999.aa.0001", uid: "grace", email: nil, verified: false),
        ]
        try source.write { tx in
            try tx.insertAccount(Account(
                uid: "ada", email: Self.ada, emailVerified: true, createdAt: 1_600_000_000,
                providers: [.emailLink, try Self.provider("google"), try Self.provider("apple"), try Self.provider("oidc:corp")]))
            try tx.insertAccount(Account(uid: "grace", createdAt: 1_600_000_000, providers: [try Self.provider("apple")]))
            try tx.insertAccount(Account(uid: "plain", email: EmailAddress.restored(localPart: "p", domain: "example.com"), createdAt: 1))
            for link in links { #expect(try tx.insertProviderIdentity(link)) }
        }
        let exported = try Self.export(source)
        #expect(exported.split(separator: "\n").last?.contains("identities") == false, "an account without identities writes no key")
        let target = InMemoryStore()
        let summary = try Self.importFile(exported, from: .postern, into: target)
        #expect(summary.imported == 3 && summary.conflicts.isEmpty && summary.malformed.isEmpty)
        let (before, after) = (try Self.contents(source), try Self.contents(target))
        #expect(after.keys.sorted() == ["ada", "grace", "plain"])
        for (uid, (account, identities)) in before {
            #expect(after[uid]?.0 == account, "\(uid)'s account")
            #expect(after[uid]?.1 == identities, "\(uid)'s identities")
        }
        #expect(try target.read { try $0.providerIdentity(provider: "apple", subject: "001234.8f3c2b7e9a1d4c5f.1234") }?.email?.address
            == "x7fk2@privaterelay.appleid.com")
        #expect(try Self.export(target) == exported, "exporting the import gives the same file")
    }

    @Test("a postern row's identities are checked: a provider that is not one, an empty subject, two of one provider", arguments: [
        (#"[{"provider":"facebook","subject":"1"}]"#, "invalid identities provider"),
        (#"[{"provider":"password","subject":"1"}]"#, "invalid identities provider"),
        (#"[{"provider":"google","subject":""}]"#, "invalid identities subject"),
        (#"[{"provider":"google"}]"#, "invalid identities subject"),
        (#"[{"provider":"google","subject":"a\u0000b"}]"#, "invalid identities subject"),
        (#"[{"provider":"google","subject":"1"},{"provider":"google","subject":"2"}]"#, "two identities of one provider"),
        (#"[{"provider":"google","subject":"1","email":"not an address"}]"#, "invalid identities email"),
        (#"[{"provider":"google","subject":"1","createdAt":-1}]"#, "invalid identities createdAt (from 1970 to 9999)"),
        (#"{"provider":"google","subject":"1"}"#, "invalid identities"),
    ])
    func posternIdentitiesChecked(identities: String, reason: String) throws {
        let line = #"{"uid":"u1","emailVerified":false,"disabled":false,"createdAt":1,"identities":"# + identities + "}"
        let rows = ExportReader(source: .postern, now: 1).rows(Data(line.utf8))
        guard case .failure(let problem) = try #require(rows.first).content else {
            Issue.record("\(identities) was accepted")
            return
        }
        #expect(problem.reason == reason)
    }

    @Test("a subject of 255 bytes is kept, one of 256 refused (OpenID Connect Core bounds sub so)")
    func subjectLength() throws {
        func content(_ length: Int) throws -> Result<Account, ImportProblem> {
            let line = #"{"uid":"u1","emailVerified":false,"disabled":false,"createdAt":1,"identities":[{"provider":"google","subject":""#
                + String(repeating: "9", count: length) + #""}]}"#
            return try #require(ExportReader(source: .postern, now: 1).rows(Data(line.utf8)).first).content
        }
        #expect(try content(255).get().providers == [try Self.provider("google")])
        #expect(throws: ImportProblem("invalid identities subject")) { try content(256).get() }
    }

    /// A `firebase auth:export --format=json` file: a Google user, an Apple user behind Apple's
    /// relay, a user of both with an unverified address, one of Facebook, phone and password only.
    static let firebaseExport = """
        {"users": [
          {"localId": "fb-google", "email": "Ada@example.com", "emailVerified": true, "displayName": "Ada",
           "photoUrl": "https://lh3.googleusercontent.com/a/ada", "createdAt": "1600000000000", "lastSignedInAt": "1700000000000",
           "providerUserInfo": [{"providerId": "google.com", "rawId": "108517425519432107357", "email": "ada@EXAMPLE.com",
             "displayName": "Ada", "photoUrl": "https://lh3.googleusercontent.com/a/ada"}]},
          {"localId": "fb-apple", "email": "x7fk2@privaterelay.appleid.com", "emailVerified": true, "createdAt": "1600000001000",
           "providerUserInfo": [{"providerId": "apple.com", "rawId": "001234.8f3c2b7e9a1d4c5f.1234",
             "email": "x7fk2@privaterelay.appleid.com"}]},
          {"localId": "fb-both", "email": "grace@example.com", "emailVerified": false, "createdAt": "1600000002000",
           "providerUserInfo": [{"providerId": "google.com", "rawId": "200000000000000000001", "email": "grace@example.com"},
             {"providerId": "apple.com", "rawId": "000999.bb.0002"},
             {"providerId": "password", "rawId": "grace@example.com", "email": "grace@example.com"}]},
          {"localId": "fb-other", "email": "lin@example.com", "emailVerified": true, "phoneNumber": "+4915112345678",
           "createdAt": "1600000003000",
           "providerUserInfo": [{"providerId": "facebook.com", "rawId": "10220000000000000", "email": "lin@example.com"},
             {"providerId": "phone", "rawId": "+4915112345678"}, {"providerId": "password", "rawId": "lin@example.com"}]}
        ]}
        """

    @Test("import --from firebase links each google.com and apple.com entry; the address is verified only when it is the user's own, verified")
    func firebaseProviders() throws {
        let store = InMemoryStore()
        let summary = try Self.importFile(Self.firebaseExport, from: .firebase, into: store)
        #expect(summary.imported == 4 && summary.malformed.isEmpty && summary.conflicts.isEmpty)
        let google = try #require(try store.read { try $0.providerIdentity(provider: "google", subject: "108517425519432107357") })
        #expect(google == Self.identity(
            "google", "108517425519432107357", uid: "fb-google", email: Self.ada, verified: true, created: 1_600_000_000, used: 1_600_000_000))
        #expect(google.email?.address == "ada@example.com", "the provider's address as it gave it")
        let apple = try #require(try store.read { try $0.providerIdentity(provider: "apple", subject: "001234.8f3c2b7e9a1d4c5f.1234") })
        #expect(apple.uid == "fb-apple" && apple.emailVerified && apple.email?.address == "x7fk2@privaterelay.appleid.com")
        let both = try store.read { try $0.providerIdentities(uid: "fb-both") }
        #expect(both.map(\.provider).sorted() == ["apple", "google"])
        #expect(both.allSatisfy { !$0.emailVerified }, "the user's address is not verified: neither is the provider's")
        #expect(both.first { $0.provider == "apple" }?.email == nil)
        #expect(try store.read { try $0.providerIdentities(uid: "fb-other") }.isEmpty, "Facebook, phone and password are not brought in")
        #expect(try Self.providers(store, "fb-google") == ["google"] && Self.providers(store, "fb-apple") == ["apple"])
        #expect(try Self.providers(store, "fb-both") == ["apple", "google"] && Self.providers(store, "fb-other") == [])
    }

    @Test("a Firebase apple.com entry whose address is not the user's comes in unverified; one without rawId makes the row malformed")
    func firebaseProviderEdges() throws {
        let store = InMemoryStore()
        let text = """
            {"users": [
              {"localId": "u1", "email": "ada@example.com", "emailVerified": true, "createdAt": "1600000000000",
               "providerUserInfo": [{"providerId": "apple.com", "rawId": "001.a.1", "email": "x7fk2@privaterelay.appleid.com"}]},
              {"localId": "u2", "email": "bob@example.com", "emailVerified": true, "createdAt": "1600000000000",
               "providerUserInfo": [{"providerId": "google.com", "email": "bob@example.com"}]},
              {"localId": "u3", "email": "cy@example.com", "createdAt": "1600000000000", "providerUserInfo": "google.com"}
            ]}
            """
        let summary = try Self.importFile(text, from: .firebase, into: store)
        #expect(summary.imported == 1)
        #expect(summary.malformed.map(\.reason) == ["invalid providerUserInfo subject", "invalid providerUserInfo"])
        let apple = try #require(try store.read { try $0.providerIdentity(provider: "apple", subject: "001.a.1") })
        #expect(apple.uid == "u1" && !apple.emailVerified && apple.email?.address == "x7fk2@privaterelay.appleid.com")
        #expect(try store.read { try $0.account(uid: "u2") } == nil)
    }

    @Test("a Firebase CSV row's Google ID is linked as in the JSON form")
    func firebaseCSVGoogle() throws {
        let store = InMemoryStore()
        // UID, Email, Email Verified, Password Hash, Password Salt, Name, Photo URL, Google ID, Google
        // Email, Google Display Name, Google Photo URL, 12 more provider columns, creation, last sign-in, phone.
        let empty12 = Array(repeating: "", count: 12)
        let fields = ["csv-1", "ada@example.com", "true", "", "", "Ada", "", "108517425519432107357", "ada@example.com", "Ada", ""]
            + empty12 + ["1600000000000", "1700000000000", ""]
        let other = ["csv-2", "bob@example.com", "true", "", "", "", "", "", "", "", ""] + empty12 + ["1600000000000", "", ""]
        let summary = try Self.importFile(fields.joined(separator: ",") + "\n" + other.joined(separator: ","), from: .firebase, into: store)
        #expect(summary.imported == 2 && summary.malformed.isEmpty)
        let google = try #require(try store.read { try $0.providerIdentity(provider: "google", subject: "108517425519432107357") })
        #expect(google.uid == "csv-1" && google.emailVerified)
        #expect(try Self.providers(store, "csv-1") == ["google"])
        #expect(try store.read { try $0.providerIdentities(uid: "csv-2") }.isEmpty)
    }

    @Test("an identity linked to another account is a conflict: the row is not imported, the link not moved, in a dry run too")
    func linkedElsewhereIsConflict() throws {
        let store = InMemoryStore()
        let holder = Self.identity("google", "108517425519432107357", uid: "already", email: nil, verified: false)
        try store.write { tx in
            try tx.insertAccount(Account(uid: "already", createdAt: 1))
            #expect(try tx.insertProviderIdentity(holder))
        }
        // The file links the Apple subject twice: the first row takes it, the second is a conflict.
        let twice = Self.firebaseExport.replacingOccurrences(of: #"{"providerId": "facebook.com""#, with: #"{"providerId": "apple.com", "rawId": "001234.8f3c2b7e9a1d4c5f.1234"}, {"providerId": "facebook.com""#)
        let dry = try Self.importFile(twice, from: .firebase, into: store, dryRun: true)
        #expect(dry.imported == 2 && dry.conflicts.count == 2)
        #expect(try store.read { try $0.account(uid: "fb-apple") } == nil, "a dry run writes nothing")
        let summary = try Self.importFile(twice, from: .firebase, into: store)
        #expect(summary.imported == 2 && summary.malformed.isEmpty)
        #expect(summary.conflicts.map(\.reason) == ["identity linked to another account", "identity linked to another account"])
        #expect(try store.read { try $0.account(uid: "fb-google") } == nil && store.read { try $0.account(uid: "fb-other") } == nil)
        #expect(try store.read { try $0.providerIdentity(provider: "google", subject: "108517425519432107357") } == holder, "never moved")
        #expect(try store.read { try $0.providerIdentity(provider: "apple", subject: "001234.8f3c2b7e9a1d4c5f.1234") }?.uid == "fb-apple")
        #expect(try store.read { try $0.providerIdentities(uid: "fb-both") }.count == 2)
    }
}
