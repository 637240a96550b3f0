import Foundation
import PosternCore

/// Reads a template directory (`templates/LOCALE/NAME.PART`) into a ``TemplateSet``.
///
/// Only the files inside the locale folders are read; files at the top (README.md) and hidden
/// files are skipped. Checking what was read is ``TemplateSet/check()``'s job.
public enum TemplateDirectory {
    /// The largest template file read; a bigger one is an error, not a mail body.
    public static let maximumFileSize = 256 * 1024

    /// Why a directory could not be read (not: why a template is wrong).
    public struct LoadError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The path that could not be read.
        public let path: String
        /// What went wrong, e.g. "not valid UTF-8".
        public let reason: String

        /// `path: reason`.
        public var description: String { "\(path): \(reason)" }
    }

    /// Every template under `directory`, keyed `LOCALE/FILE`.
    ///
    /// - Throws: ``LoadError`` when the directory or a file in a locale folder cannot be read,
    ///   is larger than ``maximumFileSize``, or is not UTF-8.
    public static func sources(at directory: URL) throws(LoadError) -> [String: String] {
        let manager = FileManager.default
        let locales: [String]
        do {
            locales = try manager.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw LoadError(path: directory.path, reason: "cannot list the template directory")
        }
        var sources: [String: String] = [:]
        for locale in locales.sorted() where !locale.hasPrefix(".") {
            let folder = directory.appendingPathComponent(locale, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let files: [String]
            do {
                files = try manager.contentsOfDirectory(atPath: folder.path)
            } catch {
                throw LoadError(path: folder.path, reason: "cannot list the locale folder")
            }
            for file in files.sorted() where !file.hasPrefix(".") {
                let url = folder.appendingPathComponent(file, isDirectory: false)
                sources["\(locale)/\(file)"] = try read(url)
            }
        }
        return sources
    }

    /// The template set in `directory`, compiled; call ``TemplateSet/check()`` on it.
    ///
    /// - Throws: ``LoadError`` as ``sources(at:)`` does.
    public static func load(_ directory: URL) throws(LoadError) -> TemplateSet {
        TemplateSet(sources: try sources(at: directory))
    }

    private static func read(_ url: URL) throws(LoadError) -> String {
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            if let size = attributes[.size] as? Int, size > maximumFileSize {
                throw LoadError(path: url.path, reason: "larger than \(maximumFileSize) bytes")
            }
            data = try Data(contentsOf: url)
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(path: url.path, reason: "cannot be read")
        }
        guard data.count <= maximumFileSize else { throw LoadError(path: url.path, reason: "larger than \(maximumFileSize) bytes") }
        guard let text = String(data: data, encoding: .utf8) else { throw LoadError(path: url.path, reason: "not valid UTF-8") }
        return text
    }
}
