import Foundation
import PosternAssembly
import PosternCore

/// `postern keys list|rotate`.
struct KeysCommand: Subcommand {
    static let name = "keys"
    static let abstract = "list the signing keys, or rotate them"
    static let usage = """
        Usage: postern keys list [--json]
               postern keys rotate [--purpose action-code|id-token|id-token-rsa]

        list    the keys in the store: id, purpose, status, created, retired, verify-until (never secrets).
        rotate  a new active key per purpose; the old one is retired and keeps verifying until
                everything it signed has expired, then is removed at the next start or rotation.
                A running daemon picks the new keys up within 30 seconds.

        """

    static let options: [OptionDeclaration] = [
        .value("purpose", "PURPOSE", "rotate: only the key of this purpose (action-code, id-token or id-token-rsa)"),
        .flag("json", "list: print the keys as JSON"),
    ]
    /// The store, and the lifetimes that say how long a retired key keeps verifying.
    static let settings = SettingsGroup.flags(.storage) + ["ttl-sign-in", "ttl-reset-password", "ttl-verify-email"]
    static let actions = ["list", "rotate"]

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        guard arguments.words.count == 2, ["list", "rotate"].contains(arguments.words[1]) else {
            throw CommandFailure(code: .usage, message: "keys needs list or rotate; see postern keys --help")
        }
        if let name = arguments.options["purpose"], !KeyPurpose.rotating.contains(where: { $0.rawValue == name }) {
            throw CommandFailure(code: .usage, message: "--purpose must be action-code, id-token or id-token-rsa")
        }
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let storage = try startup { () throws(StartupError) in try PosternStorage(settings: settings) }
        _ = try startup { () throws(StartupError) in try storage.openKeys() }
        if arguments.words[1] == "rotate" {
            let purposes: [KeyPurpose]
            if let name = arguments.options["purpose"] {
                guard let purpose = KeyPurpose.rotating.first(where: { $0.rawValue == name }) else {
                    throw CommandFailure(code: .usage, message: "--purpose must be action-code, id-token or id-token-rsa")
                }
                purposes = [purpose]
            } else {
                purposes = KeyPurpose.rotating
            }
            for purpose in purposes {
                let key = try storage.keyVault.rotate(purpose)
                print("rotated \(purpose.rawValue): new active key \(key.id)")
            }
            return ExitCode.success.rawValue
        }
        let records = try storage.keyVault.list()
        let date = { (seconds: Int64?) in
            seconds.map(isoDate) ?? "-"
        }
        if arguments.switches.contains("json") {
            let rows = records.map {
                [
                    "id": String($0.id), "purpose": $0.purpose.rawValue, "status": $0.status.rawValue,
                    "createdAt": date($0.createdAt), "retiredAt": date($0.retiredAt), "verifyUntil": date($0.verifyUntil),
                ]
            }
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("ID          PURPOSE      STATUS   CREATED               RETIRED               VERIFY-UNTIL")
            for r in records {
                print([String(r.id).padding(toLength: 11, withPad: " ", startingAt: 0),
                       r.purpose.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0),
                       r.status.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0),
                       date(r.createdAt).padding(toLength: 21, withPad: " ", startingAt: 0),
                       date(r.retiredAt).padding(toLength: 21, withPad: " ", startingAt: 0),
                       date(r.verifyUntil)].joined(separator: " "))
            }
        }
        return ExitCode.success.rawValue
    }
}
