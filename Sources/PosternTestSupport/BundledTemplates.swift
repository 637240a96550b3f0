import Foundation
import PosternCore

/// The repository's `templates/` folder for tests that need the real templates without the
/// loader of PosternMail: found from this file's path.
public enum BundledTemplates {
    /// `templates/` of the repository.
    public static var directory: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("templates", isDirectory: true)
    }

    /// Every file in the locale folders, keyed `LOCALE/FILE`.
    /// - Throws: when a folder or file cannot be read.
    public static func sources() throws -> [String: String] {
        var sources: [String: String] = [:]
        for locale in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !locale.hasPrefix(".") {
            let folder = directory.appendingPathComponent(locale, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !file.hasPrefix(".") {
                sources["\(locale)/\(file)"] = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            }
        }
        return sources
    }

    /// The hosted pages of the bundled templates with `branding`.
    /// - Throws: when the templates cannot be read or have problems.
    public static func pages(branding: Branding = Branding(appName: "Postern")) throws -> PageRenderer {
        try TemplateSet(sources: sources()).pageRenderer(branding: branding)
    }
}
