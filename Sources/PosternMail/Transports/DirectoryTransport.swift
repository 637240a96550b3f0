import Foundation
import PosternCore

/// Writes each message as one `.eml` file in a directory: the embedded default (`./mail-out`).
///
/// A file appears whole or not at all: it is written under a hidden temporary name, flushed to
/// disk, renamed into place, and the directory is flushed too.
public final class DirectoryTransport: MailTransport {
    /// The directory the files go to.
    public let directory: URL

    /// A transport into `directory`, created (0700) if missing.
    /// - Throws: `CocoaError` when the directory cannot be created.
    public init(directory: String) throws {
        self.directory = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(
            at: self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes `mail` to `<unix-ms>-<message-id token>.eml` (with `-<n>` after the time when two
    /// files would share a name: an existing file is never replaced); a write failure (disk full)
    /// is transient.
    public func deliver(_ mail: OutgoingMail) -> DeliveryOutcome {
        let stamp = Int64(Date().timeIntervalSince1970 * 1000)
        let token = Self.fileToken(mail.messageID)
        let temporary = directory.appendingPathComponent(".\(stamp)-\(token)-\(UUID().uuidString).tmp", isDirectory: false)
        do {
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                return .transient(reply: "cannot create a file in \(directory.path)", connectionFailed: true)
            }
            let file = try FileHandle(forWritingTo: temporary)
            defer { try? file.close() }
            try file.write(contentsOf: mail.bytes)
            try file.synchronize()
            // link(2) fails when the name exists, so a file appears whole and is never overwritten.
            var name = ""
            for attempt in 0..<1000 {
                name = attempt == 0 ? "\(stamp)-\(token).eml" : "\(stamp)-\(attempt)-\(token).eml"
                let final = directory.appendingPathComponent(name, isDirectory: false)
                if link(temporary.path, final.path) == 0 { break }
                guard errno == EEXIST, attempt < 999 else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))])
                }
            }
            try FileManager.default.removeItem(at: temporary)
            let folder = try FileHandle(forReadingFrom: directory)
            defer { try? folder.close() }
            try folder.synchronize()
            return .sent(reply: "250 written to \(name)")
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            return .transient(reply: "cannot write to \(directory.path): \((error as NSError).localizedDescription)", connectionFailed: true)
        }
    }

    /// Nothing to close.
    public func close() {}

    /// The Message-ID's token, reduced to file-name-safe characters.
    static func fileToken(_ messageID: String) -> String {
        let token = messageID.drop { $0 == "<" }.prefix { $0 != "@" && $0 != ">" }
        let safe = String(token.unicodeScalars.filter { $0.properties.isAlphabetic && $0.isASCII || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }.map(Character.init))
        return safe.isEmpty ? "message" : String(safe.prefix(64))
    }
}
