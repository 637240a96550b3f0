import Foundation
import Testing

/// Every transaction a flow runs names the persisters it uses (docs/code.md, "The store"): its
/// closure is typed `(tx: Writes)` or `(tx: Reads)`, the flow's own sets, so that the compiler holds
/// the flow to them. An untyped closure gets the whole `StoreWriter` and would quietly widen what
/// the flow touches; this test finds one.
@Suite("Flows name their persisters")
struct PersisterNamingTests {
    /// `context.write { tx in`, `context.read({ $0…`, `context.write { [x] tx -> T in`: a
    /// transaction closure whose parameter is not typed with the flow's set.
    static let untyped = #"context\.(write|read)\b(\(syncingLater: true\))? *+\(?+\{ *+(?:\[[^\]]*\] *+)?+(?!\(tx: (Writes|Reads)\))"#

    static var coreSources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/PosternCore")
    }

    /// The places in `text` the pattern finds, as line numbers.
    static func untypedLines(in text: String) throws -> [Int] {
        let pattern = try NSRegularExpression(pattern: untyped)
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { match in
            Range(match.range, in: text).map { text[..<$0.lowerBound].filter { $0 == "\n" }.count + 1 }
        }
    }

    @Test("the pattern finds untyped transaction closures and passes typed ones")
    func patternFindsUntyped() throws {
        #expect(try Self.untypedLines(in: "let x = try context.write { tx in\n") == [1])
        #expect(try Self.untypedLines(in: "try context.read { try $0.account(uid: uid) }") == [1])
        #expect(try Self.untypedLines(in: "\ncontext.write({ tx -> Int64? in") == [2])
        #expect(try Self.untypedLines(in: "try context.write(syncingLater: true) { tx in") == [1])
        #expect(try Self.untypedLines(in: "try context.write { [hash] tx -> Applied in") == [1])
        #expect(try Self.untypedLines(in: "try context.write { [hash] (tx: Writes) -> Applied in").isEmpty)
        #expect(try Self.untypedLines(in: "try context.read { (tx: Reads) in try tx.keys() }").isEmpty)
        #expect(try Self.untypedLines(in: "context.write({ (tx: Writes) -> Int64? in").isEmpty)
    }

    @Test("every flow's transactions in Sources/PosternCore are typed with its Writes or Reads")
    func everyTransactionIsTyped() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.coreSources, includingPropertiesForKeys: nil))
        var found: [String] = []
        var read = 0
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            read += 1
            for line in try Self.untypedLines(in: text) { found.append("\(file.lastPathComponent):\(line)") }
        }
        #expect(read > 100, "the sources were not found at \(Self.coreSources.path)")
        #expect(found.isEmpty, "untyped transaction closures: \(found)")
    }
}
