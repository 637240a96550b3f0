import Foundation
import PosternAPI
import PosternAssembly
import PosternCore
import PosternServer

/// `postern webhooks add|list|remove|rotate-secret|test`.
struct WebhooksCommand: Subcommand {
    static let name = "webhooks"
    static let abstract = "webhook endpoints: add, list, remove, rotate a secret, send a test event"
    static let usage = """
        Usage: postern webhooks add URL [--events TYPES] [--json]
               postern webhooks list [--json]
               postern webhooks remove ID
               postern webhooks rotate-secret ID [--json]
               postern webhooks test ID [--wait SECONDS]   (default 15)

        add            stores an endpoint and prints its signing secret (whsec_…) this once; the
                       database keeps it only sealed under the master key. TYPES: * (default) or
                       comma-separated event types, user.* for every user event (see docs/API.md).
                       A URL a 410 Gone disabled is enabled again.
        list           the endpoints of --webhook-urls (settings-N) and the added ones (ep_…),
                       their filters, and whether a 410 disabled them; never a secret.
        remove         deletes an added endpoint; its undelivered events are abandoned.
        rotate-secret  prints a new secret; the old one keeps signing beside it for 24 hours, so
                       the receiver can take the new one without losing an event.
        test           queues a webhook.test event for the endpoint (a running daemon delivers it)
                       and waits up to SECONDS for the outcome; exits 65 when it was not delivered.

        A running daemon sees an added, removed or rotated endpoint with its next event.

        """

    static let options: [OptionDeclaration] = [
        .value("events", "TYPES", "add: the event types the endpoint is sent (default *)"),
        .value("wait", "SECONDS", "test: how long to wait for the outcome (default 15)"),
        .flag("json", "add, list, rotate-secret: print JSON"),
    ]
    static let settings = SettingsGroup.flags(.storage, .flows)

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    static let actions = ["add", "list", "remove", "rotate-secret", "test"]

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count >= 2, Self.actions.contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "webhooks needs add, list, remove, rotate-secret or test; see postern webhooks --help")
        }
        let action = arguments.words[1]
        let wanted = action == "list" ? 2 : 3
        guard arguments.words.count == wanted else {
            throw CommandFailure(code: .usage, message: action == "add" ? "webhooks add needs one URL" : action == "list" ? "webhooks list takes no argument" : "webhooks \(action) needs one endpoint ID")
        }
        if action == "add" {
            do { try WebhookConfiguration.checkURL(arguments.words[2]) } catch {
                throw CommandFailure(code: .usage, message: "webhooks add: \(error.message)")
            }
            if let events = arguments.options["events"] {
                do { _ = try WebhookEventFilter(parsing: events) } catch {
                    throw CommandFailure(code: .usage, message: "--events: \(error.message)")
                }
            }
        }
        if action == "test", let wait = arguments.options["wait"] {
            guard let seconds = Int(wait), seconds >= 0, seconds <= 3600 else {
                throw CommandFailure(code: .usage, message: "--wait takes a number of seconds from 0 to 3600")
            }
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let flows = try startup { () throws(StartupError) in try PosternFlows(settings: settings) }
        let endpoints = flows.service.operators.webhookEndpoints
        let json = arguments.switches.contains("json")
        switch arguments.words[1] {
        case "add":
            let added = try flow { () throws(AuthError) in
                try endpoints.add(url: arguments.words[2], events: arguments.options["events"])
            }
            printSecret(added, json: json)
        case "list":
            let all = try flow { () throws(AuthError) in try endpoints.list() }
            if json {
                printBody(WebhookEndpointListBody(endpoints: all.map(WebhookEndpointBody.init)))
            } else {
                for endpoint in all {
                    let state = endpoint.disabledReason.map { "disabled (\($0))" } ?? "active"
                    let rotation = endpoint.previousSecretUntil.map { "\told secret signs until \(isoDate($0))" } ?? ""
                    print("\(endpoint.id)\t\(endpoint.url)\tevents=\(endpoint.filter)\t\(state)\(rotation)")
                }
                if all.isEmpty { print("no webhook endpoints") }
            }
        case "remove":
            let id = arguments.words[2]
            guard try flow({ () throws(AuthError) in try endpoints.remove(id: id) }) else {
                throw CommandFailure(code: .badInput, message: "no webhook endpoint \(id)")
            }
            print("removed \(id)")
        case "rotate-secret":
            let id = arguments.words[2]
            guard let rotated = try flow({ () throws(AuthError) in try endpoints.rotate(id: id) }) else {
                throw CommandFailure(code: .badInput, message: "no webhook endpoint \(id)")
            }
            printSecret(rotated, json: json)
        default:
            let id = arguments.words[2]
            guard let webhookID = try flow({ () throws(AuthError) in try endpoints.test(id: id) }) else {
                throw CommandFailure(code: .badInput, message: "no webhook endpoint \(id)")
            }
            print("queued webhook.test \(webhookID)")
            return try waitForTest(webhookID, store: flows.store, seconds: Int(arguments.options["wait"] ?? "15") ?? 15)
        }
        return ExitCode.success.rawValue
    }

    private func printSecret(_ result: WebhookEndpointSecret, json: Bool) {
        if json {
            printBody(WebhookEndpointSecretBody(result))
        } else {
            print("endpoint: \(result.endpoint.id)\t\(result.endpoint.url)\tevents=\(result.endpoint.filter)")
            print("secret:   \(result.secret)")
            print("(shown this once: give it to the receiver's Standard Webhooks library)")
        }
    }

    /// Waits for the test event's outcome: 0 once delivered, 65 when it failed or did not finish.
    private func waitForTest(_ webhookID: String, store: any Store, seconds: Int) throws -> Int32 {
        let deadline = Date().addingTimeInterval(Double(seconds))
        var last: WebhookDelivery?
        repeat {
            last = try store.read { tx in try tx.webhookDeliveries(state: nil, limit: 200).first { $0.webhookID == webhookID } }
            if let delivery = last {
                switch delivery.state {
                case .sent:
                    print("delivered: \(delivery.lastReply ?? "")")
                    return ExitCode.success.rawValue
                case .dead:
                    print("not delivered: \(delivery.lastReply ?? "")")
                    return ExitCode.badInput.rawValue
                case .retrying:
                    if Date() >= deadline { break }
                default:
                    break
                }
            }
            if seconds == 0 { break }
            Thread.sleep(forTimeInterval: 0.25)
        } while Date() < deadline
        if let delivery = last, delivery.state == .retrying {
            print("not delivered yet, retrying: \(delivery.lastReply ?? "")")
        } else {
            print("not delivered yet (is a daemon running?)")
        }
        return ExitCode.badInput.rawValue
    }
}
