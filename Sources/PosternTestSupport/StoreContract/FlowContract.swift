import Foundation
import PosternCore

/// What the flows rely on the store for, through the flows: a batch's shared snapshot grants
/// nothing, a failed flow leaves nothing, one code completes once.
enum FlowContract {
    static let cases: [StoreContractCase] = [
        StoreContractCase("flows", "the batch's shared snapshot grants nothing: a request used before its batch composes gets no mail, and of two links composed from one request the second is refused once the first is used") { store in
            let h = try FlowHarness(store)
            try h.service.emailLink.send(EmailLinkRequest(email: "used@example.com"))
            let used = try requireContract(try h.store.read { try $0.outboxMessages(state: .queued, limit: 1) }.first)
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: try h.lastLink()))
            try h.service.emailLink.send(EmailLinkRequest(email: "twice@example.com"))
            let twice = try requireContract(try h.store.read { try $0.outboxMessages(state: .queued, limit: 1) }.first)

            // The attacker's hope: a claim composed again (a crash between send and record, a second
            // daemon) mints a second live link for one request, or mail for a request already used.
            let batch = h.service.mailComposer.compose([(used.intent, used.recipient), (twice.intent, twice.recipient), (twice.intent, twice.recipient)])
            try expectContract(try batch[0].get() == nil)
            var links: [String] = []
            for result in batch.dropFirst() {
                guard case .signIn(let link, _, _) = try requireContract(try result.get()).message.content else { throw FlowHarness.NoLink() }
                links.append(link)
            }
            _ = try h.service.emailLink.complete(EmailLinkCompletion(link: links[0]))
            try expectContractThrows(AuthError.self) { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: links[1])) }
            try expectContractThrows(AuthError.self) { _ = try h.service.emailLink.complete(EmailLinkCompletion(link: links[0])) }
        },
        StoreContractCase("flows", "a failure in the middle of a flow leaves no half state") { store in
            let h = try FlowHarness(store)
            try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com"))
            let link = try h.lastLink()
            let existing = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
            let anonymous = try h.service.sessions.signInAnonymously()
            try h.service.emailLink.send(EmailLinkRequest(email: "a@example.com", idToken: anonymous.idToken))
            let second = try h.lastLink()
            // MIGRATION_REQUIRED is thrown after the transaction read the request and both accounts:
            // nothing of it may remain — the code still works afterwards.
            try expectContractThrows(AuthError.self) {
                _ = try h.service.emailLink.complete(EmailLinkCompletion(link: second, idToken: anonymous.idToken))
            }
            try expectContract(try h.store.read { try $0.account(uid: anonymous.uid) } != nil)
            let login = try h.service.emailLink.complete(
                EmailLinkCompletion(link: second, idToken: anonymous.idToken, allowMigration: true))
            try expectContract(login.uid == existing.uid)
            try expectContract(try h.store.read { try $0.account(uid: anonymous.uid) } == nil)
        },
        StoreContractCase("flows", "50 concurrent completions of one code: exactly one succeeds") { store in
            let h = try FlowHarness(store)
            try h.service.emailLink.send(EmailLinkRequest(email: "race@example.com"))
            let link = try h.lastLink()
            let wins = Counter()
            let refusals = Counter()
            DispatchQueue.concurrentPerform(iterations: 50) { _ in
                do {
                    _ = try h.service.emailLink.complete(EmailLinkCompletion(link: link))
                    wins.increment()
                } catch let error as AuthError where error.code == "LINK_USED" {
                    refusals.increment()
                } catch {}
            }
            try expectContract(wins.value == 1)
            try expectContract(refusals.value == 49)
            let accounts = try h.store.read { try $0.account(address: EmailAddress.parse("race@example.com")) }
            try expectContract(accounts != nil)
        },
    ]
}
