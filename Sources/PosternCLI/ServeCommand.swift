import Foundation
import PosternAssembly
import PosternCore
import PosternServer
import Synchronization

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

    static let settings = SettingsGroup.flags(.storage, .flows, .delivery, .daemon)

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
        if settings.publicURLFromListen, !settings.listensOnLoopbackOnly {
            // Links to 127.0.0.1 open on this host only: mail read elsewhere needs the real origin.
            logger.warning(
                "--public-url is not set: the links in mail point at the --listen address; set --public-url to the origin users reach",
                ["listen": settings.listen, "publicUrl": settings.publicURL])
        }
        // Every connection is a descriptor: take all the system allows, and keep libmicrohttpd's
        // limit below it so an excess is refused at once instead of starving the listener.
        let descriptors = ConnectionBudget.raiseFileDescriptorLimit()
        let pollingThreads = 16
        let connectionLimit = ConnectionBudget.connections(
            fileDescriptors: descriptors.limit, deliveryWorkers: Int(settings.workers), pollingThreads: pollingThreads)
        let runtime = try startup { () throws(StartupError) in try PosternRuntime(settings: settings, logger: logger) }
        // The listeners once started (their stops are the group's).
        let mainListener = Mutex<HTTPServer?>(nil)
        let metricsListener = Mutex<HTTPServer?>(nil)
        let context = ServerContext(
            service: runtime.service, keys: runtime.keys, settings: settings, logger: logger, pages: runtime.pages,
            housekeeping: runtime.housekeeping.housekeeper.metrics, reclaims: runtime.reclaims,
            webhooks: runtime.webhookMetrics)
        let router = APIRouter(runtime: context, clientAddresses: clientAddresses)
        // Started in this order, stopped in the reverse one, each once: on SIGTERM/SIGINT, or
        // when a later part cannot start. The listeners stop first (no new requests, waits cut
        // short), the outbox workers last (they finish their sends and give back the rest).
        let services = ServiceGroup(logger: logger)
        services.start("outbox workers", { runtime.workers.start() }, stop: {
            // Between two batches: what was not started goes back to the queue.
            let drained = runtime.workers.stop(timeout: 60)
            logger.info("outbox workers stopped", ["workersDrained": String(drained)])
        })
        services.start("housekeeping", { runtime.housekeeping.start() }, stop: { runtime.housekeeping.stop() })
        services.start("webhook worker", { runtime.webhooks.start() }, stop: { runtime.webhooks.stop() })
        services.start("SMS worker", { runtime.sms.start() }, stop: { runtime.sms.stop() })
        // Stopped after the listeners: then no request spends a lease, and all go back.
        services.start("client-limit leases", { runtime.leaseReturns.start() }, stop: { runtime.leaseReturns.stop() })
        let onDeadlineCut: @Sendable (Int) -> Void = { count in
            logger.info("request deadline passed: connections closed", ["connections": String(count)])
        }
        do throws(CommandFailure) {
            try services.start("HTTP listener", { () throws(CommandFailure) in
                // The polling threads keep keep-alive connections from queueing behind one
                // another; 64 workers answer the requests that wait for a commit, so up to 64
                // share one fsync. A route that answers from its commit (sign-in links on
                // SQLite) waits on no thread.
                let server: HTTPServer
                do {
                    server = try HTTPServer(listen: settings.listen, threads: pollingThreads, workers: 64,
                        connectionLimit: connectionLimit, connectionsPerIP: Int(settings.connectionsPerIP),
                        requestTimeoutSeconds: Int(settings.requestTimeout), onDeadlineCut: onDeadlineCut,
                        later: { request, reply in router.handleLater(request, reply: reply) }) { request in router.handle(request) }
                } catch {
                    throw CommandFailure(code: .unavailable, message: "\(error)")
                }
                mainListener.withLock { $0 = server }
            }, stop: {
                router.stopWaiting()
                mainListener.withLock { $0?.stop() }
            })
            // Metrics get their own listener, by default on loopback only: the counters are not
            // for the public (the main listener serves them only with the admin token).
            if let metricsListen = settings.metricsListen {
                try services.start("metrics listener", { () throws(CommandFailure) in
                    do {
                        let server = try HTTPServer(listen: metricsListen, threads: 1, connectionLimit: 64,
                            requestTimeoutSeconds: Int(settings.requestTimeout)) { request in router.serveMetrics(request) }
                        metricsListener.withLock { $0 = server }
                    } catch {
                        throw CommandFailure(code: .unavailable, message: "--metrics-listen: \(error) (give another HOST:PORT, or off)")
                    }
                }, stop: { metricsListener.withLock { $0?.stop() } })
            }
        } catch {
            // The parts started before the failed one are stopped already, in reverse.
            runtime.store.close()
            throw error
        }
        logger.info(
            "listening",
            ["listen": settings.listen, "database": PosternStorage.describe(database: settings.database), "publicUrl": settings.publicURL,
             "workers": String(settings.workers), "metricsListen": settings.metricsListen ?? "off",
             "fileDescriptorLimit": String(descriptors.limit), "fileDescriptorLimitBefore": String(descriptors.before),
             "connectionLimit": String(connectionLimit), "connectionsPerIp": String(settings.connectionsPerIP),
             "requestTimeoutSeconds": String(settings.requestTimeout)])
        if settings.workers == 0 {
            logger.warning("this daemon delivers no mail (--workers 0): what it queues waits for a daemon with workers on the same database",
                           ["database": PosternStorage.describe(database: settings.database)])
        }
        // Under systemd (Type=notify) the unit is started once the listeners take connections;
        // outside it there is no $NOTIFY_SOCKET and nothing is sent.
        let systemd = SystemdNotifier()
        notify(systemd, "READY=1\nSTATUS=listening on \(settings.listen)", logger: logger)

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
        notify(systemd, "STOPPING=1\nSTATUS=stopping: finishing the requests and sends in flight", logger: logger)
        services.stop()
        // The workers' last outcomes reach the disk before the process ends.
        runtime.store.close()
        withExtendedLifetime(sources) {}
        logger.info("stopped")
        return ExitCode.success.rawValue
    }

    /// Tells systemd `state` when there is a notifier; a failure is logged, never fatal (the
    /// daemon serves all the same, and systemd times the start out on its own).
    private func notify(_ systemd: SystemdNotifier?, _ state: String, logger: Logger) {
        guard let systemd else { return }
        do {
            try systemd.notify(state)
        } catch {
            logger.warning("cannot notify systemd", ["notifySocket": systemd.address, "error": error.description])
        }
    }
}
