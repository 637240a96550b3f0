import Foundation

extension Thread {
    /// The most bytes of a thread's name Linux keeps (16 with the terminating NUL).
    public static let osNameLimit = 15

    /// Starts `body` on a new thread named `name`, where operators look for it: `top -H`,
    /// `ps -L`, `perf`, `strace -f`, gdb. Foundation's `name`, set before `start()`, never reaches
    /// the operating system here (every thread of the daemon showed as `postern`), so the thread
    /// names itself first; a name longer than ``osNameLimit`` bytes is cut, never refused.
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Thread.nameCurrentThreadForOS(name)
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
