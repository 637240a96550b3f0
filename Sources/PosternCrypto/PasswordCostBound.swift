/// The most a stored password hash may cost to check: what this service itself would spend,
/// its own scrypt hash (`--scrypt-log-n`, r 8, p 1). Every password check is padded to the
/// slowest scheme's typical time (`PasswordCheckPacer`), so one costlier hash would slow every
/// password sign-in of every address to its own time (bcrypt 16: 2.8 s each). A hash above the
/// bound is refused at import; one already stored is left out of the pacer's timing.
///
/// Per scheme:
/// - scrypt (`$scrypt$`): N·r·p at most the service's own (2^18 at the default ln 15, r 8, p 1;
///   its memory, 128·N·r, is then at most the service's own 32 MiB).
/// - bcrypt: cost at most 10 up to `--scrypt-log-n` 15, one more per step above (each step
///   doubles both checks). Measured on the build machine (Python's bcrypt, OpenSSL's scrypt, best
///   of 3): bcrypt 10 59 ms, 11 117 ms, 12 236 ms; scrypt ln 15, r 8 122 ms. bcrypt 10,
///   Supabase's cost, is half the service's own check; 11 is already level with it, so 10 keeps
///   a factor of two for machines where bcrypt runs relatively slower (under load, 10 measured
///   0.73 s against scrypt's 1.0 s).
/// - Firebase's scrypt: Firebase's own range, rounds (r) at most 8 and mem cost (log2 N) at most
///   14 (16 MiB, 2^17: half the service's default check), which `FirebaseStoredHash` and
///   `FirebaseHashParameters` hold to already; a project's parameters are the same for all its
///   users, so they are not scaled with the service's setting.
public struct PasswordCostBound: Sendable, Hashable {
    /// N·r·p of the service's own scrypt hash: no scrypt hash may ask for more.
    public let scryptWork: Int
    /// The highest bcrypt cost.
    public let bcryptCost: Int
    /// The service's own parameters, as the reasons name them.
    private let own: String

    /// The bound for a service that hashes new passwords with `own`.
    public init(own: PasswordHasher) {
        scryptWork = (1 << own.logN) * own.blockSize * own.parallelism
        bcryptCost = 10 + max(0, own.logN - 15)
        self.own = "ln \(own.logN), r \(own.blockSize), p \(own.parallelism)"
    }

    /// The bound at Postern's default setting (`PasswordHasher.standard`).
    public static let standard = PasswordCostBound(own: .standard)

    /// Why `encoded` costs more than the bound allows (naming the parameter and the bound, never
    /// the hash), or nil when it does not. A string in no scheme, or malformed, is nil here: the
    /// verifiers refuse those on their own.
    public func excess(_ encoded: String) -> String? {
        switch PasswordScheme(of: encoded) {
        case .scrypt?:
            guard let stored = try? StoredHash(encoded) else { return nil }
            let work = (1 << stored.logN) * stored.blockSize * stored.parallelism
            guard work > scryptWork else { return nil }
            return "scrypt N·r·p above \(Self.power(scryptWork)) (this service's own hash: \(own))"
        case .bcrypt?:
            let cost = Array(encoded.utf8)[4..<6].reduce(0) { $0 * 10 + Int($1) - 0x30 }
            guard cost > bcryptCost else { return nil }
            return "bcrypt cost above \(bcryptCost) (this service's own hash: scrypt \(own))"
        case .firebaseScrypt?, nil:
            return nil
        }
    }

    /// True when `encoded` costs no more than the bound (or is no hash it knows).
    public func allows(_ encoded: String) -> Bool { excess(encoded) == nil }

    /// `2^k` for a power of two, else the number.
    private static func power(_ value: Int) -> String {
        value > 0 && value & (value - 1) == 0 ? "2^\(value.trailingZeroBitCount)" : String(value)
    }
}
