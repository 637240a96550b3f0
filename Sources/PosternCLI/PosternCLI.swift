import Foundation
import PosternCore

/// The `postern` command line: parses, validates and runs one invocation. The executable's
/// `main.swift` only calls this, so the parsing is tested in-process with argument arrays.
public enum PosternCLI {
    /// Runs `arguments` (without the program name); returns the exit code.
    public static func main(_ arguments: [String]) -> Int32 {
        // Everything Postern creates — the database and its -wal/-shm, the key file, mail files —
        // is for its own user only.
        umask(0o077)
        do {
            switch try Invocation.parse(arguments) {
            case .help(let text):
                print(text)
                return ExitCode.success.rawValue
            case .run(let command):
                return try command.run()
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
}
