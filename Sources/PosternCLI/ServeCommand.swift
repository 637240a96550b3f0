import Foundation
import PosternAssembly
import PosternCore
import PosternServer

/// `postern serve`: the HTTP API, the hosted pages and the outbox workers, until SIGTERM/SIGINT.
struct ServeCommand: Subcommand {
    static let name = "serve"
    static let abstract = "run the daemon: HTTP API, hosted pages, mail and SMS delivery (until SIGTERM/SIGINT)"
    static let usage = """
        Usage: postern serve [settings]

        Runs the daemon until SIGTERM or SIGINT: the HTTP API of API.md, the hosted action page
        (/action), the outbox workers that deliver mail, the SMS worker (--sms-transport), and housekeeping, which deletes every
        minute what has expired (see postern maintenance --help). On first start it creates the
        database, the master key file beside it (0600) and the signing keys. It refuses to start,
        saying what to fix, on a bad setting: a relative public URL, a broken template, an SMTP URL
        it cannot use. Stopping is graceful: no new connections, requests and sends in flight
        finish, unstarted mail is given back to the queue.

        Logs: one JSON object per line on standard error; never codes, links, tokens or passwords.

        """

    let arguments: ParsedArguments

    init(arguments: ParsedArguments) { self.arguments = arguments }

    /// The usage errors, found before anything is opened.
    func validate() throws(CommandFailure) {
        _ = try arguments.settings()
    }

    func run() throws -> Int32 {
        let settings = try arguments.settings()
        let clientAddresses: ClientAddressPolicy
        do {
            clientAddresses = try ClientAddressPolicy(settings: settings)
        } catch {
            throw CommandFailure(code: .usage, message: "--trusted-proxies: \(error)")
        }
        let logger = standardErrorLogger("serve", level: .info)
        // Every connection is a descriptor: take all the system allows, and keep libmicrohttpd's
        // limit below it so an excess is refused at once instead of starving the listener.
        let descriptors = ConnectionBudget.raiseFileDescriptorLimit()
        let pollingThreads = 16
        let connectionLimit = ConnectionBudget.connections(
            fileDescriptors: descriptors.limit, deliveryWorkers: Int(settings.workers), pollingThreads: pollingThreads)
        let runtime = try startup { () throws(StartupError) in try PosternRuntime(settings: settings, logger: logger) }
        let context = ServerContext(
            service: runtime.service, keys: runtime.keys, settings: settings, logger: logger, pages: runtime.pages,
            housekeeping: runtime.housekeeping.housekeeper.metrics, reclaims: runtime.reclaims,
            webhooks: runtime.webhookMetrics)
        let router = APIRouter(runtime: context, clientAddresses: clientAddresses)
        runtime.workers.start()
        runtime.housekeeping.start()
        runtime.webhooks?.start()
        runtime.sms.start()
        let onDeadlineCut: @Sendable (Int) -> Void = { count in
            logger.info("request deadline passed: connections closed", ["connections": String(count)])
        }
        let server: HTTPServer
        do {
            // 16 polling threads keep keep-alive connections from queueing behind one another; 64
            // workers answer the requests that wait for a commit, so up to 64 share one fsync. A
            // route that answers from its commit (sign-in links on SQLite) waits on no thread.
            server = try HTTPServer(listen: settings.listen, threads: 16, workers: 64,
                connectionLimit: connectionLimit, connectionsPerIP: Int(settings.connectionsPerIP),
                requestTimeoutSeconds: Int(settings.requestTimeout), onDeadlineCut: onDeadlineCut,
                later: { request, reply in router.handleLater(request, reply: reply) }) { request in router.handle(request) }
        } catch {
            runtime.housekeeping.stop()
            runtime.webhooks?.stop()
            runtime.sms.stop()
            runtime.workers.stop()
            throw CommandFailure(code: .unavailable, message: "\(error)")
        }
        // Metrics get their own listener, by default on loopback only: the counters are not for
        // the public (the main listener serves them only with the admin token).
        var metricsServer: HTTPServer?
        if let metricsListen = settings.metricsListen {
            do {
                metricsServer = try HTTPServer(listen: metricsListen, threads: 1, connectionLimit: 64,
                    requestTimeoutSeconds: Int(settings.requestTimeout)) { request in router.serveMetrics(request) }
            } catch {
                server.stop()
                runtime.housekeeping.stop()
                runtime.webhooks?.stop()
                runtime.sms.stop()
                runtime.workers.stop()
                throw CommandFailure(code: .unavailable, message: "--metrics-listen: \(error) (give another HOST:PORT, or off)")
            }
        }
        logger.info(
            "listening",
            ["listen": settings.listen, "database": PosternStorage.describe(database: settings.database), "publicUrl": settings.publicURL,
             "workers": String(settings.workers), "metricsListen": settings.metricsListen ?? "off",
             "fileDescriptorLimit": String(descriptors.limit), "fileDescriptorLimitBefore": String(descriptors.before),
             "connectionLimit": String(connectionLimit), "connectionsPerIp": String(settings.connectionsPerIP),
             "requestTimeoutSeconds": String(settings.requestTimeout)])

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
        metricsServer?.stop()
        router.stopWaiting()
        server.stop()
        // Between two batches: a round in progress does not hold up the stop.
        runtime.housekeeping.stop()
        runtime.webhooks?.stop()
        runtime.sms.stop()
        let drained = runtime.workers.stop(timeout: 60)
        // The workers' last outcomes reach the disk before the process ends.
        runtime.store.close()
        withExtendedLifetime((sources, metricsServer)) {}
        logger.info("stopped", ["workersDrained": String(drained)])
        return ExitCode.success.rawValue
    }
}
