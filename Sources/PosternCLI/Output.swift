import Foundation
import PosternAPI
import PosternCore

/// Prints a JSON object on one line (for `--json`).
func printJSON(_ object: Any) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
        return
    }
    print(String(decoding: data, as: UTF8.self))
}

/// Prints a wire body on one line (for `--json`): the same encoding as the HTTP API's answers.
func printBody<T: Encodable>(_ body: T) {
    print(String(decoding: APIJSON.encode(body), as: UTF8.self))
}

/// `postern outbox status --json`.
struct OutboxStatusBody: Encodable {
    let counts: [String: Int]
    let latest: [OutboxMessageBody]
}

/// A flow error as a command failure: 65 for bad input (invalid or expired link, malformed
/// address), 69 when the store is down, 70 for the rest.
func commandFailure(_ error: AuthError) -> CommandFailure {
    let code: ExitCode = switch error.kind {
    case .unavailable: .unavailable
    case .internalFailure: .internalError
    case .invalidInput, .unauthorized, .forbidden, .notFound, .conflict, .rateLimited: .badInput
    }
    // The operator running the command may see what went wrong inside (never a secret: store
    // errors carry no bound values).
    return CommandFailure(code: code, message: "\(error.logDetail.map { "\(error.message) \($0)" } ?? error.message) (\(error.code))")
}

/// Runs a flow, mapping its error.
func flow<T>(_ body: () throws(AuthError) -> T) throws(CommandFailure) -> T {
    do { return try body() } catch { throw commandFailure(error) }
}

/// Seconds since 1970 as ISO 8601.
func isoDate(_ seconds: Int64) -> String {
    UTCTimestamp.iso8601(seconds)
}

/// Reads standard input up to `limit` bytes (one more is read so that "too large" can be told).
func readStandardInput(limit: Int) -> String {
    var data = Data()
    while data.count <= limit, let chunk = try? FileHandle.standardInput.read(upToCount: 65_536), !chunk.isEmpty {
        data.append(chunk)
    }
    return String(decoding: data, as: UTF8.self)
}

/// A list command's `--limit`: nil (every item) when absent.
/// - Throws: a usage `CommandFailure` for anything but a number from 1.
func listLimit(_ text: String?) throws(CommandFailure) -> Int? {
    guard let text else { return nil }
    guard let count = Int(text), count >= 1 else { throw CommandFailure(code: .usage, message: "--limit takes a number from 1") }
    return count
}

/// Reads a list a page at a time (at most `pageLimit`, fewer when `limit` leaves fewer to
/// print), following each page's cursor, and hands each item to `emit` as its page comes, so
/// the list is never held whole; returns how many were handed.
/// - Throws: what `page` throws.
func streamPages<Cursor, Item>(
    pageLimit: Int, limit: Int?, page: (_ after: Cursor?, _ size: Int) throws(CommandFailure) -> ([Item], Cursor?),
    emit: (Item) -> Void
) throws(CommandFailure) -> Int {
    var printed = 0
    var cursor: Cursor?
    repeat {
        let size = min(pageLimit, limit.map { $0 - printed } ?? pageLimit)
        guard size > 0 else { break }
        let (items, next) = try page(cursor, size)
        for item in items { emit(item) }
        printed += items.count
        cursor = next
    } while cursor != nil
    return printed
}
