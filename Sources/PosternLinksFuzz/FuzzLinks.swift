// libFuzzer target for the pasted-link parser (Sources/PosternCore/Links), built by bench/fuzz-links:
//
//   swift build -c release --product postern-fuzz-links --scratch-path .build/fuzz \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -DPOSTERN_LIBFUZZER
//
// Built so, `main` hands the command line to libFuzzer's driver. In any other build (the debug
// build of the whole package) it replays the files or directories it is given through the same
// entry point, so the target compiles, and can be run, with the rest of the package. The
// byte-level pieces it fuzzes directly are `package` in PosternCore: visible here, not outside.
import Foundation
import PosternCore
#if POSTERN_LIBFUZZER
import CLibFuzzer
#endif

/// The policies inputs are parsed under: https with an app host, and http on a port (development).
private let policies: [LinkPolicy] = {
    var built = [LinkPolicy]()
    if let secure = try? LinkPolicy(publicURL: "https://auth.example.com", allowedHosts: ["app.example.com"]) {
        built.append(secure)
    }
    if let local = try? LinkPolicy(publicURL: "http://127.0.0.1:8080", allowedHosts: ["127.0.0.1", "localhost:3000"]) {
        built.append(local)
    }
    return built
}()

/// libFuzzer's entry point: parses the bytes as pasted text, then checks what the parser promises.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPastedLink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    guard let first = policies.first else {
        preconditionFailure("fuzz policy did not build")
    }
    // The first byte picks the policy so both are explored.
    let policy = (bytes.first ?? 0) & 1 == 0 ? first : (policies.last ?? first)
    let parser = PastedLinkParser(policy: policy)
    do {
        let action = try parser.parse(text)
        if case .link(let link) = action {
            precondition(!link.oobCode.isEmpty, "accepted a link without a code")
            precondition(link.oobCode.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "accepted a malformed code")
            if let continueUrl = link.continueUrl {
                precondition(
                    ContinueURLCheck.allowedURL(Array(continueUrl.utf8), policy: policy) != nil,
                    "accepted a continueUrl the check refuses")
            }
        }
    } catch {
        precondition(!error.code.isEmpty && !error.message.isEmpty, "refusal without a reason")
    }

    // The byte-level pieces also take raw bytes, including invalid UTF-8.
    _ = ProofpointV3Decoder.decode(bytes, from: 0)
    _ = Base64Decoding.decode(bytes, 0..<bytes.count)
    _ = QuotedPrintableDebris.decode(bytes)
    _ = HTMLEntityDecoding.decode(bytes)
    if let url = LinkURL(bytes) {
        _ = GatewayUnwrapper.unwrap(url)
    }
    _ = LinkCandidateScanner.candidates(in: bytes)
    return 0
}

@main
enum LinksFuzz {
    static func main() {
        #if POSTERN_LIBFUZZER
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzPastedLink(data, size) })
        #else
        replay(Array(CommandLine.arguments.dropFirst()))
        #endif
    }

    /// Runs every file named, and every file in every directory named, through the entry point;
    /// a broken promise traps as it does under libFuzzer.
    static func replay(_ paths: [String]) {
        let files = FileManager.default
        var inputs = [String]()
        for path in paths {
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("postern-fuzz-links: no such file: \(path)\n".utf8))
                exit(66)
            }
            if isDirectory.boolValue {
                let names = (try? files.contentsOfDirectory(atPath: path)) ?? []
                inputs += names.sorted().map { "\(path)/\($0)" }
            } else {
                inputs.append(path)
            }
        }
        for input in inputs {
            guard let data = files.contents(atPath: input) else { continue }
            let bytes = [UInt8](data)
            _ = bytes.withUnsafeBufferPointer { fuzzPastedLink($0.baseAddress, $0.count) }
        }
        print("postern-fuzz-links: replayed \(inputs.count) inputs (built without libFuzzer)")
    }
}
