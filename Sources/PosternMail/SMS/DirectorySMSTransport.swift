import Foundation
import PosternCore

/// Writes each SMS as one JSON file (`{"body","reference","to"}`) in a directory: the embedded
/// default (`file:./sms-out`), for development and tests. A file appears whole (written aside,
/// then renamed); a write failure (disk full) is transient.
public final class DirectorySMSTransport: SMSTransport {
    /// The directory the files go to.
    public let directory: URL

    /// A transport into `directory`, created (0700) if missing.
    /// - Throws: `CocoaError` when the directory cannot be created.
    public init(directory: String) throws {
        self.directory = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(
            at: self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    public func send(_ sms: OutgoingSMS) -> SMSResponse {
        let record: [String: String] = ["to": sms.to.e164, "body": sms.body, "reference": sms.reference]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let name = "\(Int64(Date().timeIntervalSince1970 * 1000))-\(sms.reference).json"
        do {
            let data = try encoder.encode(record)
            try data.write(to: directory.appendingPathComponent(name), options: [.atomic])
            return SMSResponse(status: 200, providerID: name, reply: "written \(name)")
        } catch {
            return SMSResponse(status: 0, reply: "cannot write to \(directory.path)")
        }
    }
}
