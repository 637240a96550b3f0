@testable import PosternCLI

/// The command line parsed as `postern` parses it, for the CLI's tests: the usage error an
/// argument array gets, or the command it makes.
enum ParsedCommand {
    /// The usage error's message for `arguments`; nil when they parse; another failure as
    /// `exit N: message`.
    static func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try Invocation.parse(arguments)
            return nil
        } catch {
            return error.code == .usage ? error.message : "exit \(error.code.rawValue): \(error.message)"
        }
    }

    /// The command of type `T` that `arguments` make.
    /// - Throws: a usage failure when they make help, another command, or a usage error.
    static func command<T>(_ arguments: [String], as type: T.Type) throws -> T {
        guard case .run(let parsed) = try Invocation.parse(arguments), let command = parsed as? T else {
            throw CommandFailure(code: .usage, message: "\(arguments) is not a \(T.self)")
        }
        return command
    }
}
