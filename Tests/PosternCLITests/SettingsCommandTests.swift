import Foundation
@testable import PosternCLI
import PosternCore
import Testing

/// `postern settings --markdown`: docs/configuration.md made from the settings' declarations.
@Suite("postern settings")
struct SettingsCommandTests {
    @Test("the table has one row per setting, with its flag, variable and help, in --help's order")
    func oneRowPerSetting() throws {
        let rows = settingsMarkdown().split(separator: "\n").filter { $0.hasPrefix("| `--") }.map(String.init)
        #expect(rows.count == Settings.descriptors.count + 1, "every setting and --config")
        for (row, descriptor) in zip(rows, Settings.descriptors) {
            #expect(row.hasPrefix("| `--\(descriptor.flag)`"), "\(row)")
            #expect(row.contains("`\(descriptor.environment)`"), "\(row)")
            let bars = row.replacingOccurrences(of: "\\|", with: "").filter { $0 == "|" }.count
            #expect(bars == 4, "three cells: a | in a help text is escaped: \(row)")
        }
        #expect(rows.contains { $0.hasPrefix("| `--trust-proxy` *switch*") })
        let bounce = try #require(rows.first { $0.hasPrefix("| `--bounce-address`") })
        #expect(bounce.contains("bounce+&lt;id&gt;"), "angle brackets shown, not read as HTML")
    }

    @Test("postern settings --markdown runs; other words and options are usage errors")
    func invocation() throws {
        guard case .run(let command) = try Invocation.parse(["settings", "--markdown"]) else {
            Issue.record("not a command")
            return
        }
        #expect(command is SettingsCommand)
        #expect(throws: CommandFailure.self) { try Invocation.parse(["settings", "extra"]) }
        #expect(throws: CommandFailure.self) { try Invocation.parse(["settings", "--listen", "127.0.0.1:1"]) }
    }
}
