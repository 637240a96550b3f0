import PosternCrypto

extension Settings {
    /// The hasher of new passwords, `--scrypt-log-n` with r 8 and p 1: what the daemon hashes
    /// with, and what bounds the cost of an imported hash (`PasswordCostBound`).
    public var passwordHasher: PasswordHasher { PasswordHasher(logN: Int(scryptLogN), blockSize: 8, parallelism: 1) }
}
