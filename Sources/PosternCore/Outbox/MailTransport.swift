/// Hands composed mail to the world: an SMTP relay, or `.eml` files in a directory.
///
/// A transport holds one connection and is used by one worker at a time (it is not `Sendable`);
/// each outbox worker makes its own from a ``MailTransportFactory``. `deliver(_:)` never throws:
/// every failure is classified into a ``DeliveryOutcome``.
public protocol MailTransport: AnyObject {
    /// Sends `mail` and says how it went.
    func deliver(_ mail: OutgoingMail) -> DeliveryOutcome
    /// Sends `mail`, but completes it (for SMTP: sends the final ".") only once `gate` returns
    /// true; when it returns false the message is abandoned unsent and the outcome is transient.
    /// The outbox passes "the previous outcome is recorded" here, so its commit overlaps this send.
    func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome
    /// Closes the connection, if any; the next `deliver(_:)` opens a new one.
    func close()
}

extension MailTransport {
    /// Waits for `gate` first, then sends: for transports that cannot hold a message back at its end.
    public func deliver(_ mail: OutgoingMail, completingAfter gate: () -> Bool) -> DeliveryOutcome {
        guard gate() else { return .transient(reply: "not sent: the previous outcome could not be recorded", connectionFailed: true) }
        return deliver(mail)
    }
}

/// Makes one transport per worker.
/// - Throws: when the transport cannot be set up (e.g. the mail directory cannot be created).
public typealias MailTransportFactory = @Sendable () throws -> any MailTransport
