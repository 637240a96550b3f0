import Foundation
import PosternCore
import PosternCrypto
import Testing

@Suite("A provider's JWKS cache: when to fetch, how long keys stay")
struct ProviderKeyCacheTests {
    let now: Int64 = 1_800_000_000

    func isFetch(_ decision: ProviderKeyCache.Decision) -> Bool {
        if case .fetch = decision { return true }
        return false
    }

    func usedKeys(_ decision: ProviderKeyCache.Decision) -> [String]? {
        if case .use(let keys) = decision { return keys.keys.map(\.keyID) }
        return nil
    }

    @Test("Cache-Control's max-age sets the lifetime, within 5 minutes and a day")
    func lifetime() {
        #expect(ProviderKeyCache.lifetime(cacheControl: "public, max-age=21600, must-revalidate, no-transform") == 21_600)
        #expect(ProviderKeyCache.lifetime(cacheControl: "Max-Age=10") == 300)
        #expect(ProviderKeyCache.lifetime(cacheControl: "max-age=9999999") == 86_400)
        #expect(ProviderKeyCache.lifetime(cacheControl: "max-age=3600, no-cache") == 300)
        #expect(ProviderKeyCache.lifetime(cacheControl: "max-age=-5") == 300)
        #expect(ProviderKeyCache.lifetime(cacheControl: "max-age=abc") == 300)
        #expect(ProviderKeyCache.lifetime(cacheControl: nil) == 300)
    }

    @Test("an empty cache fetches; a failed fetch is retried only after a minute")
    func firstFetch() {
        var cache = ProviderKeyCache()
        #expect(isFetch(cache.decision(keyID: "k1", algorithm: .rs256, now: now)))
        cache.fetchFailed(now: now)
        if case .unavailable = cache.decision(keyID: "k1", algorithm: .rs256, now: now + 59) {} else { Issue.record("expected unavailable") }
        #expect(isFetch(cache.decision(keyID: "k1", algorithm: .rs256, now: now + 60)))
    }

    @Test("fresh keys are used; an unknown kid refetches at most once a minute; stale keys refetch and survive a failed fetch")
    func refetch() throws {
        let key = try RSASigningKey(generatingWithID: "k1")
        var cache = ProviderKeyCache()
        cache.store(JSONWebKeySet(keys: [key]), cacheControl: "max-age=3600", now: now)
        #expect(usedKeys(cache.decision(keyID: "k1", algorithm: .rs256, now: now + 10)) == ["k1"])
        // A kid of the other algorithm is as unknown as a new name.
        #expect(usedKeys(cache.decision(keyID: "k1", algorithm: .es256, now: now + 10)) == ["k1"])
        #expect(usedKeys(cache.decision(keyID: "k2", algorithm: .rs256, now: now + 59)) == ["k1"])
        #expect(isFetch(cache.decision(keyID: "k2", algorithm: .rs256, now: now + 60)))
        cache.fetchFailed(now: now + 60)
        #expect(usedKeys(cache.decision(keyID: "k2", algorithm: .rs256, now: now + 100)) == ["k1"])
        // Past max-age: fetch; if that fails, the stale keys still serve until the next try.
        #expect(usedKeys(cache.decision(keyID: "k1", algorithm: .rs256, now: now + 3599)) == ["k1"])
        #expect(isFetch(cache.decision(keyID: "k1", algorithm: .rs256, now: now + 3600)))
        cache.fetchFailed(now: now + 3600)
        #expect(usedKeys(cache.decision(keyID: "k1", algorithm: .rs256, now: now + 3601)) == ["k1"])
        let rotated = try RSASigningKey(generatingWithID: "k2")
        cache.store(JSONWebKeySet(keys: [rotated]), cacheControl: nil, now: now + 3700)
        #expect(usedKeys(cache.decision(keyID: "k2", algorithm: .rs256, now: now + 3701)) == ["k2"])
    }
}
