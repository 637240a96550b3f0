import Foundation
import PosternCore
import PosternMail
import Testing

@Suite("Template directory loader")
struct TemplateDirectoryTests {
    private static var repositoryTemplates: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("templates", isDirectory: true)
    }

    private func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("postern-templates-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func write(_ text: String, to path: String, in root: URL) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    @Test func bundledDirectoryLoadsAndPassesCheck() throws {
        let set = try TemplateDirectory.load(Self.repositoryTemplates)
        #expect(set.check() == [], "\(set.check().map(\.description))")
        #expect(set.locales == ["de", "en"])
        let renderer = try set.renderer(branding: Branding(appName: "Postern"))
        let now = Date(timeIntervalSince1970: 1_746_367_327)
        let mail = renderer.render(MailMessage.sample(of: .resetPassword, now: now), preferences: ["de-AT"], now: now)
        #expect(mail.subject == "Ihr Postern-Passwort zurücksetzen (angefordert um 14:02 UTC)")
    }

    @Test func readsLocaleFoldersOnlyAndSkipsHiddenFiles() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try write("# notes", to: "README.md", in: root)
        try write("{{code}} sign in", to: "en/sign-in.subject", in: root)
        try write("x", to: "en/.sign-in.txt.swp", in: root)
        try write("Hallo", to: "de/sign-in.txt", in: root)
        try write("x", to: ".git/config", in: root)
        let sources = try TemplateDirectory.sources(at: root)
        #expect(sources == ["en/sign-in.subject": "{{code}} sign in", "de/sign-in.txt": "Hallo"])
    }

    @Test func strayFilesInLocaleFoldersShowUpInCheck() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.copyItem(at: Self.repositoryTemplates.appendingPathComponent("en"), to: root.appendingPathComponent("en"))
        try write("{{link}}", to: "en/sign-in.htm", in: root)
        let problems = try TemplateDirectory.load(root).check()
        #expect(problems.map(\.templateName) == ["en/sign-in.htm"])
        #expect(problems.first?.code == .unknownTemplateName)
    }

    @Test func unreadableInputIsALoadError() throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(throws: TemplateDirectory.LoadError.self) {
            try TemplateDirectory.sources(at: root.appendingPathComponent("missing"))
        }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("en"), withIntermediateDirectories: true)
        try Data([0x48, 0xC3, 0x28]).write(to: root.appendingPathComponent("en/sign-in.txt"))
        let error = #expect(throws: TemplateDirectory.LoadError.self) { try TemplateDirectory.sources(at: root) }
        #expect(error?.reason == "not valid UTF-8")
        #expect(error?.path.hasSuffix("en/sign-in.txt") == true)
        try Data(repeating: 0x61, count: TemplateDirectory.maximumFileSize + 1).write(to: root.appendingPathComponent("en/sign-in.txt"))
        #expect(throws: TemplateDirectory.LoadError.self) { try TemplateDirectory.sources(at: root) }
    }
}
