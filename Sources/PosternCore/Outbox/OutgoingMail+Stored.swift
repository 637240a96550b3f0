extension OutgoingMail {
    /// A composed mail read back from the outbox row it was stored on, so a retry sends the same
    /// bytes with the same Message-ID.
    public init(storedMessageID messageID: String, envelope: MailEnvelope, bytes: [UInt8]) {
        self.init(messageID: messageID, bytes: bytes, envelope: envelope)
    }
}
