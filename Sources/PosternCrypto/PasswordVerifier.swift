/// The schemes a stored password hash can be in; the string says which (PHC style).
public enum PasswordScheme: String, Sendable, Hashable {
    /// Postern's own: `$scrypt$ln=…,r=…,p=…$salt$hash`.
    case scrypt
    /// Imported from Firebase: `$firebase-scrypt$k=KEYID,r=ROUNDS,m=MEMCOST,s=SEPARATOR$salt$hash`;
    /// the signer key is not in the string but sealed in the key ring under `KEYID`.
    case firebaseScrypt = "firebase-scrypt"
    /// Imported bcrypt (`$2a$`, `$2b$`, `$2y$`), verified by libxcrypt.
    case bcrypt

    /// The markers a hash of each imported scheme starts with (`PasswordCheckPacer` times one of each).
    public static let importedMarkers: [(PasswordScheme, String)] = [
        (.firebaseScrypt, "$firebase-scrypt$"), (.bcrypt, "$2a$"), (.bcrypt, "$2b$"), (.bcrypt, "$2y$"),
    ]

    /// The scheme `encoded` names, or nil when it names none of these.
    public init?(of encoded: String) {
        if encoded.hasPrefix("$scrypt$") {
            self = .scrypt
        } else if encoded.hasPrefix("$firebase-scrypt$") {
            self = .firebaseScrypt
        } else if Bcrypt.isHash(encoded) {
            self = .bcrypt
        } else {
            return nil
        }
    }
}

/// A Firebase hash as Postern stores it: the account's salt and hash with the project's public
/// parameters, and the id of the sealed signer key.
public struct FirebaseStoredHash: Sendable, Hashable {
    /// The key ring id of the project's sealed signer key.
    public let keyID: UInt32
    /// Firebase's rounds (scrypt r).
    public let rounds: Int
    /// Firebase's mem cost (log2 N).
    public let memCost: Int
    /// The project's salt separator.
    public let saltSeparator: [UInt8]
    /// The account's salt.
    public let salt: [UInt8]
    /// The account's hash.
    public let hash: [UInt8]

    /// Creates the stored form.
    public init(keyID: UInt32, rounds: Int, memCost: Int, saltSeparator: [UInt8], salt: [UInt8], hash: [UInt8]) {
        self.keyID = keyID
        self.rounds = rounds
        self.memCost = memCost
        self.saltSeparator = saltSeparator
        self.salt = salt
        self.hash = hash
    }

    /// The PHC string (standard base64 without padding; an empty separator is written as `s=`).
    public var encoded: String {
        "$firebase-scrypt$k=\(keyID),r=\(rounds),m=\(memCost),s=\(PasswordHasher.phcBase64(saltSeparator))"
            + "$\(PasswordHasher.phcBase64(salt))$\(PasswordHasher.phcBase64(hash))"
    }

    /// Parses `encoded`.
    /// - Throws: `CryptoError.malformed` unless it is a `$firebase-scrypt$` string this type wrote.
    public init(_ encoded: String) throws(CryptoError) {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "firebase-scrypt" else { throw .malformed("Firebase password hash") }
        var values: [Substring: Substring] = [:]
        for pair in fields[2].split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2 else { throw .malformed("Firebase password hash parameters") }
            values[kv[0]] = kv[1]
        }
        guard let key = values["k"].flatMap({ UInt32($0) }), let rounds = values["r"].flatMap({ Int($0) }),
            let memCost = values["m"].flatMap({ Int($0) }), let separator = values["s"].flatMap(PasswordHasher.phcDecode),
            (1...8).contains(rounds), (1...14).contains(memCost)
        else { throw .malformed("Firebase password hash parameters") }
        guard let salt = PasswordHasher.phcDecode(fields[3]), let hash = PasswordHasher.phcDecode(fields[4]), !hash.isEmpty else {
            throw .malformed("Firebase password hash encoding")
        }
        self.init(keyID: key, rounds: rounds, memCost: memCost, saltSeparator: separator, salt: salt, hash: hash)
    }
}

/// Checks a password against a stored hash of any scheme Postern keeps, picking the verifier from
/// the string; new hashes are always Postern's scrypt (`PasswordHasher`), so an imported hash is
/// replaced at the first sign-in it verifies.
public struct PasswordVerifier: Sendable {
    /// Opened Firebase signer keys by key ring id (secrets).
    private let firebaseSignerKeys: [UInt32: [UInt8]]

    /// A verifier that knows these Firebase signer keys.
    public init(firebaseSignerKeys: [UInt32: [UInt8]] = [:]) {
        self.firebaseSignerKeys = firebaseSignerKeys
    }

    /// True when `password` matches `encoded`, in time independent of where they differ.
    /// - Throws: `CryptoError.malformed` when `encoded` is in no known scheme, or names a Firebase
    ///   key this verifier does not hold.
    public func verify(_ password: String, against encoded: String) throws(CryptoError) -> Bool {
        switch PasswordScheme(of: encoded) {
        case .scrypt: return try PasswordHasher.verify(password, against: encoded)
        case .bcrypt: return try Bcrypt.verify(password, against: encoded)
        case .firebaseScrypt:
            let stored = try FirebaseStoredHash(encoded)
            guard let signerKey = firebaseSignerKeys[stored.keyID] else { throw .malformed("Firebase password hash (unknown key)") }
            let parameters = try FirebaseHashParameters(
                signerKey: signerKey, saltSeparator: stored.saltSeparator, rounds: stored.rounds, memCost: stored.memCost)
            return try FirebaseScrypt.verify(password, salt: stored.salt, expected: stored.hash, parameters: parameters)
        case nil: throw .malformed("password hash (unknown scheme)")
        }
    }
}
