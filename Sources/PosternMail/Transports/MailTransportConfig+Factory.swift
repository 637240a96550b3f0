import Foundation
import PosternCore

extension MailTransportConfig {
    /// Why a transport could not be made from a valid configuration.
    public struct SetupError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The sentence for the operator (never the password).
        public let message: String
        public var description: String { message }
    }

    /// A factory making one transport per worker. Reads the password file now, once. An HTTP
    /// provider is reached only at an address `targets` allows (SMTP relays are not checked:
    /// a relay on the machine itself is common).
    /// - Throws: ``SetupError`` when the password file or the CA file cannot be read.
    public func transportFactory(targets: TargetAddressPolicy = TargetAddressPolicy()) throws(SetupError) -> MailTransportFactory {
        switch self {
        case .directory(let path):
            return { try DirectoryTransport(directory: path) }
        case .smtp(let endpoint):
            if let caFile = endpoint.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                throw SetupError(message: "--smtp-ca-file: cannot read \(caFile)")
            }
            let password: String?
            switch endpoint.password {
            case .none: password = nil
            case .inline(let text): password = text
            case .file(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw SetupError(message: "--smtp-password-file: cannot read \(path)")
                }
                let text = String(decoding: data, as: UTF8.self)
                password = String(text.prefix { $0 != "\n" && $0 != "\r" })
            }
            return { SMTPTransport(endpoint: endpoint, password: password) }
        case .http(let endpoint):
            if let caFile = endpoint.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                throw SetupError(message: "--smtp-ca-file: cannot read \(caFile)")
            }
            guard let data = FileManager.default.contents(atPath: endpoint.signingSecretFile) else {
                throw SetupError(message: "--mail-http-secret-file: cannot read \(endpoint.signingSecretFile)")
            }
            let secrets: [WebhookSecret]
            do {
                secrets = try WebhookSecret.list(String(decoding: data, as: UTF8.self))
            } catch {
                throw SetupError(message: "--mail-http-secret-file \(endpoint.signingSecretFile): \(error.message)")
            }
            guard !secrets.isEmpty else {
                throw SetupError(message: "--mail-http-secret-file \(endpoint.signingSecretFile) holds no whsec_ secret")
            }
            return { HTTPMailTransport(endpoint: endpoint, secrets: secrets, targets: targets) }
        }
    }
}
