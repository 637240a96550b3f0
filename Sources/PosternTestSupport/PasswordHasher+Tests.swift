import PosternCrypto

extension PasswordHasher {
    /// Cheap parameters for tests that exercise flows, not the hash.
    public static let fastForTests = PasswordHasher(logN: 4, blockSize: 1, parallelism: 1)
}
