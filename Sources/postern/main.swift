import Foundation
import PosternCore

let usage = """
    postern — email sign-in links, codes and password resets, on your own server.

    Usage: postern COMMAND [options]

    Commands:
      serve            run the daemon: HTTP API, hosted pages, mail delivery (until SIGTERM/SIGINT)
      send-link        make a sign-in, reset or verification link and mail it (--action, --email)
      handle-link      complete the action link found in pasted text (argument or stdin)
      templates        check the mail templates, or render one with sample data
      keys             list the signing keys, or rotate them
      outbox           mail delivery: status, retry dead messages, purge old ones
      users            show, disable, enable or delete a user

    Every command takes --help and the settings below.
    Exit codes: 0 success, 64 usage, 65 bad input, 69 a dependency is down, 70 internal.

    """

func run() -> Int32 {
    // Everything Postern creates — the database and its -wal/-shm, the key file, mail files — is
    // for its own user only.
    umask(0o077)
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
        case "send-link": return try SendLinkCommand.run(parsed)
        case "handle-link": return try HandleLinkCommand.run(parsed)
        case "templates": return try TemplatesCommand.run(parsed)
        case "outbox": return try OutboxCommand.run(parsed)
        case "users": return try UsersCommand.run(parsed)
        case "help":
            print(usage + settingsHelp())
            return ExitCode.success.rawValue
        default:
            throw CommandFailure(code: .usage, message: "unknown command \(command.debugDescription); see postern --help")
        }
    } catch let failure as CommandFailure {
        printError("postern: \(failure.message)")
        return failure.code.rawValue
    } catch let failure as AuthError {
        let failure = commandFailure(failure)
        printError("postern: \(failure.message)")
        return failure.code.rawValue
    } catch {
        printError("postern: \(error)")
        return ExitCode.internalError.rawValue
    }
}

exit(run())
