import Foundation
import PosternAssembly
import PosternCore

/// `postern sms test|status`.
struct SMSCommand: Subcommand {
    static let name = "sms"
    static let abstract = "SMS delivery: send a test SMS, show the SMS outbox"
    static let usage = """
        Usage: postern sms test NUMBER [--now]
               postern sms status [--json]

        test    queues a test SMS to NUMBER (+E.164, or national with --default-region) through the
                configured --sms-transport; a running daemon sends it within a second or two. The
                country must be in --sms-countries; no other cap applies to an operator's test.
                With --now it is sent at once by this command instead, not queued, and the
                provider's answer is printed (its status and message id or error code, never a
                credential).
        status  counts by state and the latest SMS: id, state, intent, country code, attempts and
                the provider's last answer (the number itself is never shown, and is erased from
                the database once a message is sent or dead).

        """

    static let options: [OptionDeclaration] = [
        .flag("now", "test: send at once through the transport instead of queueing, and print its answer"),
        .flag("json", "status: print JSON"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows, .delivery)
    static let actions = ["test", "status"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count >= 2, ["test", "status"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "sms needs test or status; see postern sms --help")
        }
        let settings = try arguments.settings()
        if arguments.words[1] == "test" {
            guard arguments.words.count == 3 else { throw CommandFailure(code: .usage, message: "sms test needs one NUMBER") }
            _ = try Self.number(arguments.words[2], settings: settings)
        }
    }

    /// The number, parsed by the one parser; the message never echoes it.
    static func number(_ text: String, settings: Settings) throws(CommandFailure) -> PhoneNumber {
        do {
            return try PhoneNumber.parse(text, defaultRegion: settings.sms.defaultRegion)
        } catch {
            throw CommandFailure(code: .usage, message: "NUMBER: \(error.description)")
        }
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        switch arguments.words[1] {
        case "status":
            let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
            let service = flows.service
            let latest = try flow { () throws(AuthError) in try service.operators.smsMessages(state: nil, limit: 10_000) }
            var counts: [String: Int] = Dictionary(uniqueKeysWithValues: OutboxState.allCases.map { ($0.rawValue, 0) })
            for message in latest { counts[message.state.rawValue, default: 0] += 1 }
            let shown = latest.prefix(20)
            if arguments.switches.contains("json") {
                printBody(SMSStatusBody(counts: counts, latest: shown.map(SMSStatusBody.Message.init)))
            } else {
                print(OutboxState.allCases.map { "\($0.rawValue)=\(counts[$0.rawValue] ?? 0)" }.joined(separator: " "))
                for m in shown {
                    print("\(m.id)\t\(m.state.rawValue)\t\(m.intent.name)\t+\(m.countryCallingCode)\tattempts=\(m.attempts)\t\(m.lastReply ?? "")")
                }
            }
        default:
            let number = try Self.number(arguments.words[2], settings: settings)
            let reference = "cli-\(UUID().uuidString.prefix(8).lowercased())"
            if arguments.switches.contains("now") {
                let logger = standardErrorLogger("sms", level: .warning)
                let runtime = try startup { () throws(StartupError) in try PosternRuntime(settings: settings, logger: logger) }
                guard settings.smsConfiguration.countries.contains(number.region) else {
                    throw CommandFailure(code: .badInput, message: AuthError.smsCountryNotAllowed.message)
                }
                let transport: any SMSTransport
                do { transport = try runtime.smsTransport() } catch {
                    throw CommandFailure(code: .unavailable, message: "--sms-transport: \(error)")
                }
                let rendered = runtime.smsRenderer.render(SMSContent(kind: .test, code: SMSComposer.testSMSCode))
                let response = transport.send(OutgoingSMS(reference: reference, to: number, body: rendered.body))
                print("\(response.reply)\t\(rendered.segments.encoding.rawValue), \(rendered.segments.parts) segment(s)")
                if case .sent = response.outcome { return ExitCode.success.rawValue }
                return ExitCode.unavailable.rawValue
            }
            let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
            let service = flows.service
            let id = try flow { () throws(AuthError) in try service.operators.queueTestSMS(to: number, reference: reference) }
            print("queued test SMS \(id) to \(number.redacted) (\(reference))")
        }
        return ExitCode.success.rawValue
    }
}

/// `postern sms status --json`.
struct SMSStatusBody: Encodable {
    struct Message: Encodable {
        let id: Int64
        let state: String
        let intent: String
        let country: String
        let attempts: Int
        let lastReply: String?

        init(_ message: SMSMessage) {
            id = message.id
            state = message.state.rawValue
            intent = message.intent.name
            country = "+" + message.countryCallingCode
            attempts = message.attempts
            lastReply = message.lastReply
        }
    }

    let counts: [String: Int]
    let latest: [Message]
}
