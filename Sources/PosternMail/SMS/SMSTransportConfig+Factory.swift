import Foundation
import PosternCore

extension SMSTransportConfig {
    /// What the log may say about the transport: its kind and where, never a credential.
    public var description: String {
        switch self {
        case .file(let directory): "file:\(directory)"
        case .twilio(let sid): "twilio:\(sid)"
        case .json(let url): "json:" + ProviderURL.forLog(url)
        }
    }

    /// The factory of one transport per worker, with every secret read now (at start-up: a
    /// missing file stops the daemon, not a send), reaching only the addresses `targets` allows.
    /// - Throws: `SettingsError` naming the setting that is missing or unreadable.
    public func transportFactory(_ settings: SMSSettings, targets: TargetAddressPolicy) throws(SettingsError) -> SMSTransportFactory {
        let (caFile, timeout) = (settings.caFile, settings.timeout)
        switch self {
        case .file(let directory):
            return { try DirectorySMSTransport(directory: directory) }
        case .twilio(let sid):
            guard let path = settings.authTokenFile else { throw SettingsError("twilio: needs --sms-twilio-auth-token-file") }
            let token = try SecretFile.line(path, setting: "--sms-twilio-auth-token-file")
            let sender: TwilioSMSTransport.Sender
            if let service = settings.messagingServiceSID {
                sender = .messagingService(service)
            } else if let from = settings.from {
                sender = .from(from)
            } else {
                throw SettingsError("twilio: needs --sms-from or --sms-twilio-messaging-service-sid")
            }
            let base = settings.twilioBaseURL
            return { TwilioSMSTransport(baseURL: base, accountSID: sid, authToken: token, sender: sender, caFile: caFile, timeout: timeout, targets: targets) }
        case .json(let url):
            guard let path = settings.jsonSecretFile else { throw SettingsError("json: needs --sms-json-secret-file") }
            let secrets = try SecretFile.webhookSecrets(path, setting: "--sms-json-secret-file")
            return { JSONSMSTransport(url: url, secrets: secrets, caFile: caFile, timeout: timeout, targets: targets) }
        }
    }
}
