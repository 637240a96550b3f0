import Foundation
import PosternCore

let usage = """
    postern — email sign-in links, codes and password resets, on your own server.

    Usage: postern COMMAND [options]

    Commands:
      serve            run the daemon: HTTP API, hosted pages, mail delivery (until SIGTERM/SIGINT)
      keys list        show the signing keys (ids, purpose, status; never the secrets)
      keys rotate      make new active keys; old ones keep verifying until their codes expire
                       (--purpose action-code|id-token; default both)

    Not yet in this build (tracked as open issues): send-link, handle-link, templates, outbox, users.

    Every command takes --help and the settings below.
    Exit codes: 0 success, 64 usage, 65 bad input, 69 a dependency is down, 70 internal.

    """

func run() -> Int32 {
    let arguments = Array(CommandLine.arguments.dropFirst())
    do {
        let parsed = try ParsedArguments(arguments)
        guard let command = parsed.words.first else {
            if parsed.switches.contains("help") {
                print(usage + settingsHelp())
                return ExitCode.success.rawValue
            }
            printError(usage + "\nGive a command; see postern --help.")
            return ExitCode.usage.rawValue
        }
        switch command {
        case "serve": return try ServeCommand.run(parsed)
        case "keys": return try KeysCommand.run(parsed)
        case "help":
            print(usage + settingsHelp())
            return ExitCode.success.rawValue
        default:
            throw CommandFailure(code: .usage, message: "unknown command \(command.debugDescription); see postern --help")
        }
    } catch let failure as CommandFailure {
        printError("postern: \(failure.message)")
        return failure.code.rawValue
    } catch {
        printError("postern: \(error)")
        return ExitCode.internalError.rawValue
    }
}

exit(run())
