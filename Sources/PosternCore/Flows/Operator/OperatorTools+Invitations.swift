extension OperatorTools {
    /// Invites `email` (`postern users invite`, `POST /v1/admin/invitations`): records an
    /// invitation (an action request whose sign-in link creates the address's account whatever
    /// ``SignUpPolicy`` says, once, until `--invitation-lifetime` ends) and queues its mail.
    /// Unlike the public flows this tells whether the address has an account: the operator may
    /// know, and one that has is sent nothing. No limits apply.
    /// - Throws: `AuthError.invalidEmail`, `invalidContinueURL`, `invitedAccountExists`.
    public func invite(email: String, continueURL: String?, locale: String?) throws(AuthError) -> Invitation {
        let address = try context.parseEmail(email)
        let continueURL = try context.checkContinueURL(continueURL)
        let now = context.clock.unixSeconds()
        let request = ActionRequest(
            id: try FlowContext.newRequestID(at: context.clock.now()), purpose: .invitation, email: address,
            continueURL: continueURL, locale: locale.flatMap(FlowContext.cleanLocale), createdAt: now,
            expiresAt: FlowContext.adding(context.config.lifetime(.invitation), to: now))
        let messageID = try context.write { (tx: Writes) -> Int64 in
            guard try tx.account(address: address) == nil else { throw AuthError.invitedAccountExists }
            try tx.insertActionRequest(request)
            return try tx.enqueue(.invitation(requestID: request.id), recipient: address, now: now, giveUpAt: request.expiresAt)
        }
        context.metrics.requested(request.purpose.action)
        return Invitation(email: address.address, expiresAt: request.expiresAt, messageID: messageID)
    }
}

/// An invitation an operator made: its mail is queued (the link is in the mail only).
public struct Invitation: Sendable, Hashable {
    /// The address invited.
    public var email: String
    /// When its link stops working (seconds since 1970).
    public var expiresAt: Int64
    /// The outbox message carrying it.
    public var messageID: Int64
}
