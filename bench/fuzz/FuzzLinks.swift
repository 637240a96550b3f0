// libFuzzer target for the pasted-link parser. Built by bench/fuzz-links together with the
// parser's sources (one module, so internal pieces can be fuzzed directly too); not part of the
// package.

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
public func fuzzPastedLink(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
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
