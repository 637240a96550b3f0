import Foundation
import PosternAPI
import PosternCrypto

/// What the link's page shows before the owner approves a sign-in on another device.
public struct ApprovalPrompt: Sendable, Hashable {
    /// The waiting device ("Chrome on Linux").
    public let device: String
    /// The address, masked as the page shows it ("a•••@example.org").
    public let maskedEmail: String
}

/// What the number typed on the page did.
public enum ApprovalOutcome: Sendable, Hashable {
    /// The right number: the waiting device gets the session; the owner gets a notice.
    case approved(device: String)
    /// A wrong number: the approval is ended (the link's 6-digit code still works).
    case cancelled
}

/// "Approve on your other device": the asking device shows a 2-digit number and waits on its
/// PKCE verifier; the link opened elsewhere shows, after a button press, the device's name and
/// asks for the number; the right one approves, any other ends the approval (not the link's
/// 6-digit code); the session goes only to the holder of the verifier. Nothing a mail scanner does
/// changes anything: a GET only looks, and no form goes without the number typed into it.
///
/// The number is typed, not picked: the page offered three to pick from, so an owner who tapped
/// one without looking at the asking device (a stranger's, who had only to know the address and
/// name the device like one of the owner's) approved it one time in three. Typed, a guess is
/// right one time in 90, and one wrong number ends the approval.
extension EmailLinkFlow {
    /// A new approval: a number from 10 to 99 from the CSPRNG.
    /// - Throws: `invalidArgument` for an unusable device name; `internalError` when the random
    ///   generator fails.
    static func newApproval(device: String) throws(AuthError) -> ActionRequest.Approval {
        let name = String(device.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) })
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.unicodeScalars.count <= WireLimits.deviceNameMaximumLength else {
            throw .invalidArgument("deviceName must be 1 to \(WireLimits.deviceNameMaximumLength) characters.")
        }
        do {
            return ActionRequest.Approval(number: 10 + Int(try SecureRandom.uniform(below: 90)), device: name)
        } catch {
            throw .internalError("random generator: \(error)")
        }
    }

    /// The page's question for the sign-in link `oobCode`, or nil when the link is a plain
    /// sign-in link (the page then shows its usual continue button). Reads only.
    /// - Throws: `INVALID_OOB_CODE` / `EXPIRED_OOB_CODE` for a bad, used, cancelled or approved link.
    public func approvalPrompt(oobCode: String) throws(AuthError) -> ApprovalPrompt? {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let request = try signInRequestForPage(oobCode, ring: ring, now: now)
        guard let approval = request.approval else { return nil }
        guard ledger.life(request).awaitsApproval(now: now) else { throw .invalidCode("This sign-in was already approved.") }
        return ApprovalPrompt(device: approval.device, maskedEmail: request.email.masked)
    }

    /// The owner typed `number` on the page of the sign-in link `oobCode`.
    /// - Throws: `INVALID_OOB_CODE` / `EXPIRED_OOB_CODE`, also for a link that awaits no approval.
    public func pickApproval(oobCode: String, number: Int) throws(AuthError) -> ApprovalOutcome {
        let ring = context.keys.current
        let now = context.clock.unixSeconds()
        let request = try signInRequestForPage(oobCode, ring: ring, now: now)
        let ledger = self.ledger
        enum Result: Sendable { case outcome(ApprovalOutcome), refused }
        let result = try context.write { (tx: Writes) -> Result in
            guard let current = try tx.actionRequest(id: request.id) else { return .refused }
            var life = ledger.life(current)
            switch life.pick(number, at: now) {
            case .refused:
                return .refused
            case .cancelled:
                try tx.updateActionRequest(life.request)
                return .outcome(.cancelled)
            case .approved:
                try tx.updateActionRequest(life.request)
                let device = life.request.approval?.device ?? ""
                try ActionLedger.queueNotice(.signInApproved(device: device), to: current.email, tx: tx, now: now)
                return .outcome(.approved(device: device))
            }
        }
        guard case .outcome(let outcome) = result else { throw .invalidCode("This sign-in does not wait for an approval.") }
        return outcome
    }

    /// The waiting device asks whether its request was approved: the session when it was (the
    /// request is used up), nil while it waits. Only the holder of the verifier gets an answer.
    /// - Throws: `INVALID_OOB_CODE` when no open request of `email` has this verifier (cancelled,
    ///   used, expired, or never asked), and the errors of a sign-in (`MIGRATION_REQUIRED`, …).
    public func approvalResult(email text: String, codeVerifier: String, idToken: String?, allowMigration: Bool?) throws(AuthError) -> LoginDescriptor? {
        let email = try context.parseEmail(text)
        let presented = try sessions.presented(idToken)
        let challenge = Array(FlowContext.s256Challenge(of: codeVerifier).utf8)
        let now = context.clock.unixSeconds()
        let open = try context.read { (tx: Reads) in try tx.openActionRequests(purpose: .signIn, address: email, now: now) }
        guard let request = open.first(where: {
            $0.approval != nil && ConstantTime.equals(Array(($0.codeChallenge ?? "").utf8), challenge)
        }) else {
            throw .invalidCode("No sign-in of this address waits for this device: it was cancelled, used or has expired.")
        }
        guard ledger.life(request).isApproved(now: now) else { return nil }
        // The session is the device the owner approved, by the name the owner was shown.
        let origin = SessionOrigin(
            deviceName: request.approval?.device ?? SessionOrigin.current?.deviceName, network: SessionOrigin.current?.network)
        return try SessionOrigin.$current.withValue(origin) {
            Result { () throws(AuthError) in
                try finish(
                    request: request, codeExpiry: request.expiresAt, presented: presented, askerReturned: true,
                    allowMigration: allowMigration, method: "emailLink", now: now, approved: true)
            }
        }.get()
    }

    /// The verified sign-in request of a page's `oobCode`, open at `now`.
    private func signInRequestForPage(_ oobCode: String, ring: KeyRing, now: Int64) throws(AuthError) -> ActionRequest {
        let request = try context.read { (tx: Reads) in
            try self.ledger.verifiedRequest(oobCode, expecting: .signIn, ring: ring, now: now, tx: tx).1
        }
        guard ledger.life(request).isOpen(now: now) else { throw AuthError.code(.alreadyUsed) }
        return request
    }
}
