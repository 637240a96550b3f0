import Foundation
import PosternCore

/// Writes each message as one `.eml` file in a directory: the embedded default (`./mail-out`).
///
/// A file appears whole or not at all, and never replaces another: it is written under a hidden
/// temporary name and flushed to disk, then linked under its final name (link(2) fails when the
/// name exists), the temporary name is removed, and the directory is flushed too. Plain POSIX
/// calls relative to a directory descriptor held open: no path lookups from the root and no
/// Foundation file objects per message.
public final class DirectoryTransport: MailTransport {
    /// The directory the files go to.
    public let directory: URL
    private let folder: Int32
    private let temporaryPrefix: String
    private var temporaryCounter = 0

    /// A transport into `directory`, created (0700) if missing.
    /// - Throws: `CocoaError` when the directory cannot be created or opened.
    public init(directory: String) throws {
        self.directory = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(
            at: self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        folder = open(self.directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot open \(directory): \(Self.lastError())"])
        }
        // Per process and transport; O_EXCL settles any clash (a stale file of a crashed process).
        temporaryPrefix = ".\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    deinit { Glibc.close(folder) }

    /// Writes `mail` to `<unix-ms>-<message-id token>.eml` (with `-<n>` after the time when two
    /// files would share a name: an existing file is never replaced); a write failure (disk full)
    /// is transient.
    public func deliver(_ mail: OutgoingMail) -> DeliveryOutcome { deliver(mail) { true } }

    /// Writes and flushes the file under its temporary name, then waits for `gate` before giving
    /// it its final name: the flush overlaps the previous outcome's record.
    public func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
        let temporary: String
        do {
            temporary = try writeTemporary(mail.bytes)
        } catch {
            return .transient(reply: "cannot write to \(directory.path): \(error.reason)", connectionFailed: true)
        }
        var temporaryRemoved = false
        defer { if !temporaryRemoved { unlinkat(folder, temporary, 0) } }
        guard gate() else { return .transient(reply: "not sent: the previous outcome could not be recorded", connectionFailed: true) }
        let stamp = Int64(Date().timeIntervalSince1970 * 1000)
        let token = Self.fileToken(mail.messageID)
        for attempt in 0..<1000 {
            let name = attempt == 0 ? "\(stamp)-\(token).eml" : "\(stamp)-\(attempt)-\(token).eml"
            if linkat(folder, temporary, folder, name, 0) == 0 {
                unlinkat(folder, temporary, 0)
                temporaryRemoved = true
                guard fsync(folder) == 0 else {
                    return .transient(reply: "cannot flush \(directory.path): \(Self.lastError())", connectionFailed: true)
                }
                return .sent(reply: "250 written to \(name)")
            }
            guard errno == EEXIST else { break }
        }
        return .transient(reply: "cannot name a file in \(directory.path): \(Self.lastError())", connectionFailed: true)
    }

    /// Nothing to close (the directory stays open for the next message).
    public func close() {}

    private struct WriteError: Error { let reason: String }

    /// Creates a new hidden file (0600), writes `bytes`, flushes it; its name.
    private func writeTemporary(_ bytes: [UInt8]) throws(WriteError) -> String {
        var name = ""
        var file: Int32 = -1
        while file < 0 {
            temporaryCounter += 1
            name = "\(temporaryPrefix)-\(temporaryCounter).tmp"
            file = openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if file < 0 && errno != EEXIST { throw WriteError(reason: Self.lastError()) }
        }
        defer { Glibc.close(file) }
        var written = 0
        let failure: String? = bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let n = write(file, buffer.baseAddress! + written, buffer.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    return Self.lastError()
                }
                written += n
            }
            return fsync(file) == 0 ? nil : Self.lastError()
        }
        if let failure {
            unlinkat(folder, name, 0)
            throw WriteError(reason: failure)
        }
        return name
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }

    /// The Message-ID's token, reduced to file-name-safe characters.
    static func fileToken(_ messageID: String) -> String {
        let token = messageID.drop { $0 == "<" }.prefix { $0 != "@" && $0 != ">" }
        let safe = String(token.unicodeScalars.filter { $0.properties.isAlphabetic && $0.isASCII || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }.map(Character.init))
        return safe.isEmpty ? "message" : String(safe.prefix(64))
    }
}
