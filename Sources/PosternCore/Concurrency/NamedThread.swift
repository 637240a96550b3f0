import Foundation

extension Thread {
    /// The most bytes of a thread's name Linux keeps (16 with the terminating NUL).
    public static let osNameLimit = 15

    /// Starts `body` on a new thread named `name`, where operators look for it: `top -H`,
    /// `ps -L`, `perf`, `strace -f`, gdb. Foundation's `name`, set before `start()`, never reaches
    /// the operating system here (every thread of the daemon showed as `postern`), so the thread
    /// names itself first; a name longer than ``osNameLimit`` bytes is cut, never refused.
    /// With `.batch` scheduling the thread also asks Linux to treat it as bulk work (see
    /// ``ThreadScheduling``).
    public static func start(named name: String, scheduling: ThreadScheduling = .normal, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Thread.nameCurrentThreadForOS(name)
            scheduling.applyToCurrentThread()
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Names the calling thread for the operating system: `name` cut to ``osNameLimit`` bytes.
    static func nameCurrentThreadForOS(_ name: String) {
        #if os(Linux)
            // Glibc's pthread_setname_np is not imported (a GNU extension) and prctl is variadic;
            // a thread may write its own name here (Linux 3.17 and later).
            let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            defer { close(fd) }
            let cut = Array(name.utf8.prefix(osNameLimit))
            _ = cut.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #endif
    }
}

/// How the operating system schedules a thread of the daemon.
public enum ThreadScheduling: Sendable {
    /// Linux's default (`SCHED_OTHER`): a thread that wakes may preempt the one running.
    case normal
    /// Background work: `SCHED_BATCH` at nice ``batchNice``. For bulk work whose every wake-up is
    /// cheap to delay and costly to grant, which should have the CPU the requests leave: the outbox
    /// workers wake 4 times a message (one per SMTP reply), and under a burst of requests they
    /// competed with the threads answering them.
    /// - `SCHED_BATCH`: a wake-up of this thread never preempts the thread running on its core; it
    ///   waits for that one's time slice. The workers preempted the store's writer 0.04 times a
    ///   message instead of 0.14, and a drain was 9 % faster (5,628 against 5,149 messages a
    ///   second, six alternating pairs).
    /// - nice: when the CPU is contended, the requests' threads (nice 0) get most of it; when it is
    ///   not, the workers get all they can use, as before. Under send-link load with delivery over
    ///   SMTP, requests were answered 17–33 % faster (23,020 and 20,966 against 19,597 and
    ///   15,792 a second) while the workers delivered a third less during the load (13,344 and
    ///   12,773 messages in 10 s against 19,402 and 19,004); the backlog left was drained as fast.
    case batch

    /// The nice value of `.batch` threads, at least: CFS gives a nice-10 thread about a tenth of a
    /// nice-0 thread's share when both want the CPU.
    public static let batchNice: Int32 = 10

    /// Applies this to the calling thread. A refusal (a kernel without `SCHED_BATCH`, a seccomp
    /// filter) leaves the thread as it was: scheduling is a performance hint, never a condition.
    func applyToCurrentThread() {
        #if os(Linux)
            guard case .batch = self else { return }
            // Glibc defines SCHED_BATCH only under _GNU_SOURCE, which Swift's Glibc module does not
            // import; 3 is the kernel's ABI value (include/uapi/linux/sched.h). Pid 0 is the calling
            // thread: on Linux a scheduling policy and a nice value are per thread. The nice value
            // only ever goes up (a daemon started niced stays as niced), which needs no privilege.
            var parameters = sched_param(sched_priority: 0)
            _ = sched_setscheduler(0, Self.linuxBatchPolicy, &parameters)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            _ = setpriority(which, 0, max(getpriority(which, 0), Self.batchNice))
        #endif
    }

    /// `SCHED_BATCH` on Linux.
    static let linuxBatchPolicy: Int32 = 3
}
