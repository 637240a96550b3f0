import PosternCore

/// The suppression list's reads (``OutboxReader/suppression(of:)``, ``OutboxReader/suppressions(after:limit:)``)
/// and the rule that a complaint is not replaced by another kind of reason.
enum SuppressionContract {
    static func address(_ local: String) -> EmailAddress { EmailAddress.restored(localPart: local, domain: "example.com") }

    static let cases: [StoreContractCase] = [
        StoreContractCase("suppressions", "one address's reason and time; older rows' text read as the nearest kind; a later one moves both") { store in
            try store.write { tx in
                try tx.suppress(address("Bob"), reason: SuppressionReason.bounce.stored("5.1.1"), now: 100)
                try tx.suppress(address("carol"), reason: "550 5.1.1 unknown user", now: 101)
                try tx.suppress(address("dave"), reason: "bounced: 5.2.2", now: 102)
            }
            let bob = try store.read { try $0.suppression(of: address("BOB")) }
            try expectContract(bob, equals: Suppression(address: "bob@example.com", reason: .bounce, detail: "5.1.1", suppressedAt: 100), "bob")
            let carol = try store.read { try $0.suppression(of: address("carol")) }
            try expectContract(carol?.reason == .rejected && carol?.detail == "550 5.1.1 unknown user", "a bare reply is a rejection")
            try expectContract(try store.read { try $0.suppression(of: address("dave")) }?.reason, equals: .bounce, "the intake's old text")
            try expectContract(try store.read { try $0.suppression(of: address("erin")) } == nil, "none for an address not suppressed")
            try store.write { try $0.suppress(address("bob"), reason: SuppressionReason.rejected.stored("550 no"), now: 150) }
            try expectContract(
                try store.read { try $0.suppression(of: address("bob")) },
                equals: Suppression(address: "bob@example.com", reason: .rejected, detail: "550 no", suppressedAt: 150), "moved")
        },
        StoreContractCase("suppressions", "a complaint is not replaced by a bounce or a rejection, only by another complaint") { store in
            try store.write { try $0.suppress(address("ann"), reason: SuppressionReason.complaint.stored("abuse"), now: 100) }
            try store.write { try $0.suppress(address("ann"), reason: SuppressionReason.bounce.stored("5.1.1"), now: 110) }
            try store.write { try $0.suppress(address("ann"), reason: SuppressionReason.rejected.stored("550 no"), now: 120) }
            try expectContract(
                try store.read { try $0.suppression(of: address("ann")) },
                equals: Suppression(address: "ann@example.com", reason: .complaint, detail: "abuse", suppressedAt: 100), "the complaint kept")
            try store.write { try $0.suppress(address("ann"), reason: SuppressionReason.complaint.stored("fraud"), now: 130) }
            try expectContract(try store.read { try $0.suppression(of: address("ann")) }?.suppressedAt, equals: 130, "a later complaint moves it")
            try store.write { try $0.suppress(address("ann2"), reason: SuppressionReason.bounce.stored("5.1.1"), now: 100) }
            try store.write { try $0.suppress(address("ann2"), reason: SuppressionReason.complaint.stored("abuse"), now: 140) }
            try expectContract(try store.read { try $0.suppression(of: address("ann2")) }?.reason, equals: .complaint, "a complaint replaces a bounce")
        },
        StoreContractCase("suppressions", "pages newest first (time, then address), each after the last one's cursor, none repeated") { store in
            // Five at 100 (ties broken by address, descending), then one each at 90..<100.
            try store.write { tx in
                for local in ["a", "b", "c", "d", "e"] { try tx.suppress(address(local), reason: "bounce: 5.1.1", now: 100) }
                for at in Int64(90)..<100 { try tx.suppress(address("old\(at)"), reason: "complaint: abuse", now: at) }
            }
            var seen: [String] = []
            var cursor: SuppressionCursor?
            var pages = 0
            repeat {
                let after = cursor
                let page = try store.read { try $0.suppressions(after: after, limit: 4) }
                try expectContract(page.count <= 4, "at most the limit")
                seen += page.map(\.address)
                cursor = page.count == 4 ? page.last?.cursor : nil
                pages += 1
            } while cursor != nil && pages < 10
            let expected = ["e", "d", "c", "b", "a"].map { "\($0)@example.com" } + (90..<100).reversed().map { "old\($0)@example.com" }
            try expectContract(seen, equals: expected, "every row once, newest first")
            try expectContract(try store.read { try $0.suppressions(after: nil, limit: 0) }.isEmpty, "limit 0")
            let tail = try store.read { try $0.suppressions(after: SuppressionCursor(suppressedAt: 100, address: "c@example.com"), limit: 3) }
            try expectContract(tail.map(\.address), equals: ["b@example.com", "a@example.com", "old99@example.com"], "after a tie")
        },
    ]
}
