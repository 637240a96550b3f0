import PosternCore

/// The webhook deliveries as a lease queue (``LeasedQueue/webhooks``): their claim, outcomes and
/// purge. The endpoints (stored, filtered, sealed, rotated) are a concern of their own.
enum WebhookDeliveryContract {
    static let claimable = DeliveryStateMachine.claimableStates

    static let cases: [StoreContractCase] = [
        StoreContractCase(
            "webhook deliveries",
            "claimed under a lease with whether a 410 disabled the endpoint since, finished by the holder only, retried when due, purged"
        ) { store in
            let (first, second) = ("https://a.example/in", "https://b.example/in")
            try store.write { tx in
                try tx.enqueueWebhook(
                    webhookID: "msg_1", eventType: "user.created", body: "{\"n\":1}", endpoints: [first, second], now: 100, giveUpAt: 1000)
            }
            try expectContract(try store.read { try $0.webhookCounts() }[.queued], equals: 2, "one delivery per endpoint")

            // A claim takes the oldest due, with a lease, body and all.
            let a = try store.write { try $0.claimDue(.webhooks, owner: "w1", now: 100, leaseUntil: 160, limit: 1, claimable: claimable) }
            let claimed = try requireContract(a.first, "the first claim")
            try expectContract(a.count, equals: 1, "at most the limit")
            try expectContract(claimed.delivery.endpoint, equals: first, "the oldest first")
            try expectContract(
                claimed.delivery.webhookID == "msg_1" && claimed.delivery.eventType == "user.created" && claimed.delivery.body == "{\"n\":1}",
                "the event, as queued")
            try expectContract(claimed.delivery.state == .claimed && claimed.delivery.nextAttemptAt == 160, "claimed, leased until 160")
            try expectContract(claimed.endpointDisabled == false, "its endpoint is enabled")

            // An endpoint disabled (a 410) after its delivery was queued: the claim says so.
            try store.write { try $0.disableWebhookEndpoint(second, reason: "HTTP 410", now: 101) }
            let b = try store.write { try $0.claimDue(.webhooks, owner: "w2", now: 101, leaseUntil: 161, limit: 5, claimable: claimable) }
            let gone = try requireContract(b.first, "the second claim")
            try expectContract(b.count == 1 && gone.delivery.endpoint == second && gone.endpointDisabled, "claimed, its endpoint disabled")
            try expectContract(
                try store.write { try $0.claimDue(.webhooks, owner: "w3", now: 102, leaseUntil: 162, limit: 5, claimable: claimable) }.isEmpty,
                "both leased")

            // Only the lease holder records outcomes, once.
            let (sentID, deadID) = (claimed.delivery.id, gone.delivery.id)
            try expectContract(
                try store.write { try $0.markSent(.webhooks, id: sentID, owner: "w2", now: 103, reply: "HTTP 204") } == false, "not w2's")
            try expectContract(try store.write { try $0.markSent(.webhooks, id: sentID, owner: "w1", now: 103, reply: "HTTP 204") }, "sent")
            try expectContract(
                try store.write { try $0.markSent(.webhooks, id: sentID, owner: "w1", now: 104, reply: "HTTP 204") } == false, "sent once")
            try expectContract(
                try store.write { try $0.markDead(.webhooks, id: deadID, owner: "w2", now: 104, reply: "not sent: disabled") }, "dead")
            let finished = try store.read { try $0.webhookDeliveries(state: nil, limit: 10) }
            let sent = try requireContract(finished.first { $0.id == sentID }, "the delivered one")
            let dead = try requireContract(finished.first { $0.id == deadID }, "the abandoned one")
            try expectContract(
                sent.state == .sent && sent.attempts == 1 && sent.finishedAt == 103 && sent.lastReply == "HTTP 204", "delivered, one attempt")
            try expectContract(
                dead.state == .dead && dead.attempts == 0 && dead.finishedAt == 104 && dead.lastReply == "not sent: disabled",
                "abandoned, no attempt counted")

            // Nothing more is queued for the disabled endpoint; a failed attempt is due again at its time.
            try store.write { tx in
                try tx.enqueueWebhook(
                    webhookID: "msg_2", eventType: "user.deleted", body: "{}", endpoints: [first, second], now: 110, giveUpAt: 1000)
            }
            let next = try store.write { try $0.claimDue(.webhooks, owner: "w1", now: 110, leaseUntil: 170, limit: 5, claimable: claimable) }
            let retried = try requireContract(next.first, "the next claim")
            try expectContract(next.count == 1 && retried.delivery.endpoint == first, "only the enabled endpoint's")
            try expectContract(
                try store.write { try $0.markRetry(.webhooks, id: retried.delivery.id, owner: "w1", at: 200, reply: "HTTP 503") }, "retry")
            try expectContract(
                try store.write { try $0.markRetry(.webhooks, id: retried.delivery.id, owner: "w1", at: 300, reply: "HTTP 503") } == false,
                "no longer held")
            let retrying = try store.read { try $0.webhookDeliveries(state: .retrying, limit: 10) }
            try expectContract(retrying.map(\.attempts), equals: [1], "retrying, one attempt")
            try expectContract(
                try store.write { try $0.claimDue(.webhooks, owner: "w2", now: 199, leaseUntil: 260, limit: 5, claimable: claimable) }.isEmpty,
                "not due before 200")
            try expectContract(
                try store.write { try $0.claimDue(.webhooks, owner: "w2", now: 200, leaseUntil: 260, limit: 5, claimable: claimable) }
                    .map(\.delivery.id), equals: [retried.delivery.id], "due at 200")

            // Purge: finished before the horizon only, at most `limit`; the unfinished stay.
            try expectContract(try store.write { try $0.purgeFinished(.webhooks, before: 103, limit: 10) }, equals: 0, "before 103")
            try expectContract(try store.write { try $0.purgeFinished(.webhooks, before: 105, limit: 1) }, equals: 1, "at most 1")
            try expectContract(try store.write { try $0.purgeFinished(.webhooks, before: 105, limit: 10) }, equals: 1, "the other")
            try expectContract(
                try store.read { try $0.webhookDeliveries(state: nil, limit: 10) }.map(\.id), equals: [retried.delivery.id], "the unfinished one")
            try expectContract(try store.read { try $0.webhookCounts() }, equals: expectedCounts(claimed: 1), "counts")
        }
    ]

    static func expectedCounts(claimed: Int) -> WebhookCounts {
        var counts = WebhookCounts()
        counts.byState[.claimed] = claimed
        return counts
    }
}
