/// What `postern --version` says about the build. A checkout's build says `dev` and `unknown`;
/// `scripts/package` writes the release's version (from `VERSION`) and git commit here before its
/// release build and puts this file back after it, so a plain `swift build` needs nothing.
enum BuildStamp {
    /// The release version, `VERSION`'s line; `dev` for a build from a checkout.
    static let version = "dev"
    /// The git commit the release was built from; `unknown` for a build from a checkout.
    static let commit = "unknown"
}
