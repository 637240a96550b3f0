import Foundation

/// Waits until `condition` holds, looking every few milliseconds; true once it does, false if it
/// still did not after `seconds` of real time. For conditions another thread brings about (a
/// worker sent the mail, a checkpoint ran): the tests' one bounded wait, so they neither sleep a
/// guessed time nor hang when what they wait for never comes.
///
/// The timeout is a guard, not a timing: a condition met on a loaded machine just takes longer.
/// It proves only that something happened; that something did NOT happen is proved by a later
/// event it would have preceded (a worker parked again on a ``ManualMonotonicClock``, more claims
/// made), never by waiting here for it to stay false.
///
/// It blocks its thread: an async test calls it on a thread of its own, not on one of the few
/// that run tasks (the threads it waits for may need them to start).
public func eventually(within seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: 0.005)
    }
}

