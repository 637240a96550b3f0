import Foundation
import PosternCore

#if canImport(Glibc)
import Glibc
#endif

/// Looks up a process on this machine for the ``LivenessPolicy``: `kill(pid, 0)` says whether
/// the pid exists (`ESRCH`: it does not; `EPERM`: it does, another user's), and
/// `/proc/PID/stat` with `/proc/stat`'s boot time says when its process started, so a reused pid
/// is told from the daemon that had it.
enum LocalProcessProbe {
    /// What runs as `pid` now.
    static func probe(_ pid: Int32) -> LocalProcess {
        guard pid > 0 else { return .gone }
        if kill(pid, 0) != 0, errno == ESRCH { return .gone }
        return .running(startedAt: startTime(of: pid))
    }

    /// When `pid`'s process started, in Unix seconds (rounded down), or nil when unreadable.
    static func startTime(of pid: Int32) -> Int64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let bootTime = bootTime(),
            let ticks = startTicks(stat: stat)
        else { return nil }
        let perSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        guard perSecond > 0 else { return nil }
        return bootTime + ticks / perSecond
    }

    /// Field 22 of `/proc/PID/stat` (clock ticks after boot). The command name (field 2, in
    /// parentheses) may hold spaces and parentheses: the fields are counted after the last `)`.
    static func startTicks(stat: String) -> Int64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // After the name come fields 3, 4, …: field 22 is the 20th.
        guard fields.count > 19 else { return nil }
        return Int64(fields[19])
    }

    /// `btime` of `/proc/stat`: the boot time in Unix seconds.
    private static func bootTime() -> Int64? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Int64(line.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
