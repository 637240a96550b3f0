import Foundation
import PosternCore

/// One case of `shared/corpus/links.jsonl` (see the corpus README for the fields).
struct LinkCorpusCase: Sendable {
    /// What the case expects.
    enum Expectation: Sendable {
        case link(mode: String, oobCode: String, continueUrl: String?, lang: String?)
        case refusal
    }

    let name: String
    let text: String
    let origin: String
    let allowedHosts: [String]
    let expectation: Expectation
}


/// Loading the shared corpus of pasted links.
enum LinkCorpus {
    /// Where `links.jsonl` was found, or nil.
    ///
    /// `POSTERN_CORPUS` (the file or its folder) wins; otherwise `shared/corpus` beside the clone:
    /// this file is `<clone>/Tests/PosternCoreTests/…`, and CI keeps `shared/` next to the clone.
    static let fileURL: URL? = {
        var candidates = [URL]()
        if let override = ProcessInfo.processInfo.environment["POSTERN_CORPUS"], !override.isEmpty {
            let url = URL(fileURLWithPath: override)
            candidates.append(url.pathExtension == "jsonl" ? url : url.appendingPathComponent("links.jsonl"))
        }
        let thisFile = URL(fileURLWithPath: #filePath)
        for file in [thisFile, thisFile.resolvingSymlinksInPath()] {
            let clone = file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            candidates.append(clone.deletingLastPathComponent().appendingPathComponent("shared/corpus/links.jsonl"))
            candidates.append(clone.appendingPathComponent("shared/corpus/links.jsonl"))
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }()

    /// Every case of the corpus; empty when it cannot be found or read (a separate test fails then).
    static let cases: [LinkCorpusCase] = {
        guard let fileURL, let data = try? Data(contentsOf: fileURL) else { return [] }
        var cases = [LinkCorpusCase]()
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                  let name = object["name"] as? String, let text = object["text"] as? String,
                  let origin = object["origin"] as? String, let allowed = object["allowedHosts"] as? [String],
                  let expect = object["expect"] as? [String: Any]
            else {
                cases.append(LinkCorpusCase(name: "unreadable line", text: "", origin: "", allowedHosts: [], expectation: .refusal))
                continue
            }
            let expectation: LinkCorpusCase.Expectation
            if expect["error"] as? Bool == true {
                expectation = .refusal
            } else {
                expectation = .link(
                    mode: expect["mode"] as? String ?? "",
                    oobCode: expect["oobCode"] as? String ?? "",
                    continueUrl: expect["continueUrl"] as? String,
                    lang: expect["lang"] as? String)
            }
            cases.append(LinkCorpusCase(name: name, text: text, origin: origin, allowedHosts: allowed, expectation: expectation))
        }
        return cases
    }()
}
