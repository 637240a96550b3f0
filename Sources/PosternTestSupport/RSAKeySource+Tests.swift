import PosternCore
import PosternCrypto

extension RSAKeySource {
    /// One RSA key made on first use and given again for every new RS256 key of the process: the
    /// flows' tests open a key ring per test, and making a 2048-bit key takes a tenth of a second
    /// or more. Each record still has its own id, hence its own `kid`; a test that needs two keys
    /// that differ (rotation, a stranger's key) uses ``generating``.
    public static let madeOncePerProcess = RSAKeySource { try sharedRSAKeyDER.get() }
}

/// The key `madeOncePerProcess` gives (a global: made once, on first use, thread-safely).
private let sharedRSAKeyDER = Result { () throws(CryptoError) in try RSASigningKey(generatingWithID: "").privateKeyDER() }
