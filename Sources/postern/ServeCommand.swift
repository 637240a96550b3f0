import Foundation
import PosternCore
import PosternServer

/// `postern serve`: so far the skeleton that opens the store, prepares the keys and answers the
/// health, readiness and JWKS endpoints; the daemon issue adds the API, pages and mail workers.
enum ServeCommand {
    static let help = """
        Usage: postern serve [settings]

        Runs the daemon until SIGTERM or SIGINT. Opens (and migrates) the database, creates the
        master key file beside it (0600) and the signing keys on first start, then serves:
          GET /healthz                 liveness
          GET /readyz                  the store answers
          GET /.well-known/jwks.json   public keys of ID tokens

        """

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        if arguments.switches.contains("help") {
            print(help + settingsHelp())
            return ExitCode.success.rawValue
        }
        let settings = try arguments.settings()
        let environment = try Environment(settings, label: "serve")
        let ring: KeyRing
        do {
            ring = try environment.keys.prepare()
        } catch {
            throw CommandFailure(code: .unavailable, message: "cannot prepare the signing keys: \(error)")
        }
        let jwks = (try? JSONSerialization.data(withJSONObject: ring.jwks, options: [.sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) } ?? #"{"keys":[]}"#
        let store = environment.store
        let server: HTTPServer
        do {
            server = try HTTPServer(listen: settings.listen) { request in
                switch (request.method, request.path) {
                case ("GET", "/healthz"), ("HEAD", "/healthz"):
                    return .json(200, #"{"status":"ok"}"#)
                case ("GET", "/readyz"), ("HEAD", "/readyz"):
                    let ready = (try? store.read { _ in true }) ?? false
                    return ready ? .json(200, #"{"status":"ready"}"#)
                        : .error(503, code: "UNAVAILABLE", message: "The store does not answer.")
                case ("GET", "/.well-known/jwks.json"):
                    return .json(200, jwks)
                default:
                    return .error(404, code: "NOT_FOUND", message: "No endpoint \(request.method) \(request.path).")
                }
            }
        } catch {
            throw CommandFailure(code: .unavailable, message: "\(error)")
        }
        environment.logger.info(
            "listening", ["listen": settings.listen, "database": settings.database, "publicUrl": settings.publicURL])

        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        stop.wait()
        environment.logger.info("stopping")
        server.stop()
        withExtendedLifetime(sources) {}
        environment.logger.info("stopped")
        return ExitCode.success.rawValue
    }
}
