import Foundation
import PosternCore

extension SQLiteTransaction {
    func enqueue(_ intent: MailIntent, recipient: EmailAddress, now: Int64, giveUpAt: Int64) throws -> Int64 {
        let encoded = String(decoding: try JSONEncoder().encode(intent), as: UTF8.self)
        try db.execute(
            "INSERT INTO outbox (intent, recipient, state, next_attempt_at, created_at, give_up_at) VALUES (?, ?, 'queued', ?, ?, ?)",
            [.text(encoded), .text(recipient.address), .integer(now), .integer(now), .integer(giveUpAt)])
        return db.lastInsertedRowID
    }
}
