// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "Postern",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "postern", targets: ["postern"]),
        .executable(name: "postern-bench", targets: ["PosternBench"]),
        // libFuzzer over the pasted-link parser when built as bench/fuzz-links builds it; a replayer otherwise.
        .executable(name: "postern-fuzz-links", targets: ["PosternLinksFuzz"]),
        .executable(name: "postern-demo", targets: ["PosternDemo"]),
        // The Swift client an app adds: Foundation only, no C module in its graph. Static, because
        // SwiftPM builds an automatic library only as part of a whole build: `swift build --product
        // PosternAuth` must build it alone.
        .library(name: "PosternAuth", type: .static, targets: ["PosternAuth"]),
    ],
    targets: [
        // C bridges: a module map and a shim header each; only the one Swift target that wraps a
        // library imports it.
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        // libxcrypt's crypt_r: verifies imported bcrypt hashes (PosternCrypto wraps it).
        .systemLibrary(
            name: "CCrypt", pkgConfig: "libxcrypt",
            providers: [.apt(["libcrypt-dev"])]),

        // The wire module: the contract's request and answer bodies, Foundation only (the client
        // library and the server share it).
        .target(name: "PosternAPI", swiftSettings: strict),
        // The client library for apps (iOS, macOS, Linux): the wire module and Foundation only.
        .target(name: "PosternAuth", dependencies: ["PosternAPI"], swiftSettings: strict),
        // The example app: a terminal walk through the client's flows, on the client alone.
        .executableTarget(name: "PosternDemo", dependencies: ["PosternAuth"], path: "Examples/PosternDemo", swiftSettings: strict),
        .systemLibrary(
            name: "CIDN2", pkgConfig: "libidn2",
            providers: [.apt(["libidn2-dev"])]),
        .target(name: "PosternIDNA", dependencies: ["CIDN2"], swiftSettings: strict),
        // libphonenumber (Debian's libphonenumber-dev: apt-get install libphonenumber-dev; scripts/setup
        // installs it) is C++, so this bridge is a C++ target, not a system library: PhoneNumbers.cpp gives
        // its PhoneNumberUtil a plain C face (include/CPhoneNumbers.h), and SwiftPM links the C++ standard
        // library into every product that holds it (postern, postern-bench, the tests; not the demo).
        // `providers: [.apt(...)]` exists only on system-library targets and is shown only when their
        // pkg-config lookup fails; the Debian package ships no .pc file, so such a target would warn on
        // every build, installed or not: the package is named here instead.
        .target(name: "CPhoneNumbers", linkerSettings: [.linkedLibrary("phonenumber")]),
        .target(name: "PosternPhoneNumbers", dependencies: ["CPhoneNumbers"], swiftSettings: strict),
        .target(name: "PosternCrypto", dependencies: ["COpenSSL", "CCrypt"], swiftSettings: strict),
        .target(
            name: "PosternCore", dependencies: ["PosternAPI", "PosternCrypto", "PosternIDNA", "PosternPhoneNumbers"],
            swiftSettings: strict),
        // The stores' SQL, written once over a session seam; SQLite and PostgreSQL each own their handle.
        .target(name: "PosternSQL", dependencies: ["PosternAPI", "PosternCore", "PosternCrypto"], swiftSettings: strict),
        .target(name: "PosternStore", dependencies: ["PosternCore", "PosternCrypto", "PosternSQL", "CSQLite"], swiftSettings: strict),
        .target(name: "PosternPostgres", dependencies: ["PosternCore", "PosternSQL", "CLibPQ"], swiftSettings: strict),
        .target(name: "PosternMail", dependencies: ["PosternCore", "CCurl"], swiftSettings: strict),
        // HTTP: knows the flows, not the store or the transports (the assembly wires them).
        .target(name: "PosternServer", dependencies: ["PosternCore", "PosternAPI", "CMicroHTTPD"], swiftSettings: strict),
        // The composition root: storage → flows → delivery; `postern serve` adds HTTP on top.
        .target(
            name: "PosternAssembly", dependencies: ["PosternCore", "PosternCrypto", "PosternStore", "PosternPostgres", "PosternMail"],
            swiftSettings: strict),
        // The command line as a library (tested with argument arrays) and the executable over it.
        .target(
            name: "PosternCLI",
            dependencies: ["PosternCore", "PosternCrypto", "PosternMail", "PosternAPI", "PosternAssembly", "PosternServer"],
            swiftSettings: strict),
        .executableTarget(name: "postern", dependencies: ["PosternCLI"], swiftSettings: strict),
        .executableTarget(
            name: "PosternBench",
            dependencies: ["PosternCore", "PosternCrypto", "PosternStore", "PosternMail", "PosternTestSupport"],
            swiftSettings: strict),
        // libFuzzer's driver, declared only: the sanitizer runtime provides it when -sanitize=fuzzer links it.
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(name: "PosternLinksFuzz", dependencies: ["PosternCore", "CLibFuzzer"], swiftSettings: strict),

        // Test doubles for the test targets only: the in-memory store, a manual clock, cheap scrypt.
        .target(name: "PosternTestSupport", dependencies: ["PosternCore", "PosternCrypto"], swiftSettings: strict),

        // The client against a real `postern serve` (the debug build): depends on the client alone.
        .testTarget(name: "PosternAuthTests", dependencies: ["PosternAuth", "PosternAPI"], swiftSettings: strict),
        .testTarget(name: "PosternCryptoTests", dependencies: ["PosternCrypto"], swiftSettings: strict),
        .testTarget(name: "PosternCoreTests", dependencies: ["PosternCore", "PosternCrypto", "PosternTestSupport"], swiftSettings: strict),
        // Tests whose oracle is another implementation run from Python (PyJWT, the email package):
        // they need the test tools scripts/test installs.
        .testTarget(name: "PosternOracleTests", dependencies: ["PosternCore", "PosternCrypto", "PosternMail"], swiftSettings: strict),
        .testTarget(name: "PosternCLITests", dependencies: ["PosternCLI", "PosternCore", "PosternAssembly", "PosternTestSupport"], swiftSettings: strict),
        .testTarget(name: "PosternMailTests", dependencies: ["PosternMail", "PosternCore", "PosternCrypto", "PosternTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "PosternServerTests", dependencies: ["PosternServer", "PosternStore", "PosternAPI", "PosternCore", "PosternCrypto", "PosternTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "PosternStoreTests",
            dependencies: ["PosternStore", "PosternPostgres", "PosternSQL", "PosternCore", "PosternCrypto", "PosternTestSupport"],
            swiftSettings: strict),
    ],
    // libphonenumber's headers need C++17 (Abseil's containers).
    cxxLanguageStandard: .cxx17
)
