/// Hands composed mail to the world: an SMTP relay, or `.eml` files in a directory.
///
/// A transport holds one connection and is used by one worker at a time (it is not `Sendable`);
/// each outbox worker makes its own from a ``MailTransportFactory``. `deliver(_:)` never throws:
/// every failure is classified into a ``DeliveryOutcome``.
public protocol MailTransport: AnyObject {
    /// Sends `mail` and says how it went.
    func deliver(_ mail: OutgoingMail) -> DeliveryOutcome
    /// Closes the connection, if any; the next `deliver(_:)` opens a new one.
    func close()
}

/// Makes one transport per worker.
/// - Throws: when the transport cannot be set up (e.g. the mail directory cannot be created).
public typealias MailTransportFactory = @Sendable () throws -> any MailTransport
