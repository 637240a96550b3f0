import Foundation
import PosternCore
import Synchronization
import Testing

@Suite("Logger")
struct LoggerTests {
    @Test("levels order debug < info < warning < error, and a logger writes its level and above")
    func levels() throws {
        let order: [Logger.Level] = [.debug, .info, .warning, .error]
        for (i, a) in order.enumerated() {
            for (j, b) in order.enumerated() { #expect((a < b) == (i < j), "\(a) < \(b)") }
        }
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", level: .warning) { line in lines.withLock { $0.append(line) } }
        logger.log(.debug, "d")
        logger.info("i")
        logger.warning("w", ["k": "v"])
        logger.error("e")
        let written = lines.withLock { $0 }
        #expect(written.count == 2)
        let first = try #require(written.first.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] })
        #expect(first["msg"] == "w" && first["level"] == "warning" && first["k"] == "v" && first["logger"] == "test")
    }

    @Test("a line below the level is not built: its message and fields are never evaluated")
    func droppedLinesCostNothing() {
        let built = Atomic<Int>(0)
        func fields() -> [String: String] {
            built.add(1, ordering: .relaxed)
            return ["id": "1"]
        }
        func message() -> String {
            built.add(1, ordering: .relaxed)
            return "outbox: sent"
        }
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", level: .info) { line in lines.withLock { $0.append(line) } }
        logger.log(.debug, message(), fields())
        let dropped = built.load(ordering: .relaxed)
        #expect(dropped == 0)
        logger.log(.info, message(), fields())
        let written = built.load(ordering: .relaxed)
        #expect(written == 2)
        #expect(lines.withLock { $0.count } == 1)
    }

    @Test("a line is one JSON object with its keys in byte order, whatever its values carry: a value cannot start a line of its own")
    func oneLineWhateverTheValues() throws {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", level: .info, metadata: ["Zone": "z"]) { line in lines.withLock { $0.append(line) } }
        // What an attacker puts in an address or a header, hoping to forge a second line or break the JSON.
        let hostile = "a\"b\\c\n{\"level\":\"error\",\"msg\":\"forged\"}\r\t\u{0}\u{1F}\u{7F}/é\u{2028}😀"
        logger.info("m\nx", ["email": hostile, "b": "2"])
        let line = try #require(lines.withLock { $0.first })
        #expect(!line.contains("\n") && !line.contains("\r") && !line.unicodeScalars.contains { $0.value < 0x20 })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["email"] == hostile && object["msg"] == "m\nx" && object["b"] == "2" && object["Zone"] == "z")
        // Keys in UTF-8 byte order (upper case first), so lines diff and grep the same way every time.
        let keys = line.dropFirst(2).components(separatedBy: ",\"").map { String($0.prefix { $0 != "\"" }) }
        #expect(keys == ["Zone", "b", "email", "level", "logger", "msg", "ts"])
        #expect(line.contains(#""email":"a\"b\\c\n{\"level\":\"error\",\"msg\":\"forged\"}\r\t\u0000\u001f"#))
    }
}
