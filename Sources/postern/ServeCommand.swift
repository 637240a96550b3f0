import Foundation
import PosternCore
import PosternServer

/// `postern serve`: the HTTP API, the hosted pages and the outbox workers, until SIGTERM/SIGINT.
enum ServeCommand {
    static let help = """
        Usage: postern serve [settings]

        Runs the daemon until SIGTERM or SIGINT: the HTTP API of API.md, the hosted action page
        (/action), and the outbox workers that deliver mail. On first start it creates the
        database, the master key file beside it (0600) and the signing keys. It refuses to start,
        saying what to fix, on a bad setting: a relative public URL, a broken template, an SMTP URL
        it cannot use. Stopping is graceful: no new connections, requests and sends in flight
        finish, unstarted mail is given back to the queue.

        Logs: one JSON object per line on standard error; never codes, links, tokens or passwords.

        """

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        if arguments.switches.contains("help") {
            print(help + settingsHelp())
            return ExitCode.success.rawValue
        }
        let settings = try arguments.settings()
        let logger = standardErrorLogger("serve", level: .info)
        let runtime = try startup { () throws(StartupError) in try PosternRuntime(settings: settings, logger: logger) }
        let router = APIRouter(runtime: runtime)
        runtime.workers.start()
        let server: HTTPServer
        do {
            // 16 polling threads keep keep-alive connections from queueing behind one another; 64
            // workers answer the requests that wait for a commit, so up to 64 share one fsync.
            server = try HTTPServer(listen: settings.listen, threads: 16, workers: 64) { request in router.handle(request) }
        } catch {
            runtime.workers.stop()
            throw CommandFailure(code: .unavailable, message: "\(error)")
        }
        logger.info(
            "listening",
            ["listen": settings.listen, "database": settings.database, "publicUrl": settings.publicURL,
             "workers": String(settings.workers)])

        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        stop.wait()
        logger.info("stopping")
        server.stop()
        let drained = runtime.workers.stop(timeout: 60)
        // The workers' last outcomes reach the disk before the process ends.
        runtime.store.close()
        withExtendedLifetime(sources) {}
        logger.info("stopped", ["workersDrained": String(drained)])
        return ExitCode.success.rawValue
    }
}
