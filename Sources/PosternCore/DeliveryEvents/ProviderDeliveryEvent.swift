import Foundation

/// What one provider's event says of one recipient: suppress it for a bounce or a complaint, or
/// nothing (a soft bounce, a delivery, an event of another kind: `reason` nil).
struct ProviderDeliveryEvent: Sendable, Equatable {
    /// The recipient as the provider wrote it; nil for an event that names none Postern acts on.
    var address: String?
    /// Why to suppress it; nil to ignore the event.
    var reason: SuppressionReason?
    /// The detail stored beside the reason: the provider and what it said (never an address).
    var detail: String

    static func ignored(_ detail: String) -> ProviderDeliveryEvent { ProviderDeliveryEvent(address: nil, reason: nil, detail: detail) }

    /// The most recipients one event may name: SES names at most 50 a message.
    static let mostRecipients = 100

    /// The events of an SES notification (SNS's `Message`): an SES event publishing
    /// (`eventType`) or a notification (`notificationType`) of a bounce or a complaint. Only a
    /// `Permanent` bounce suppresses; a `Transient` or `Undetermined` one, a delivery and anything
    /// else is ignored.
    static func ses(_ message: String) -> [ProviderDeliveryEvent] {
        guard let object = jsonObject(Array(message.utf8)) else { return [.ignored("amazon-ses: the message is not JSON")] }
        let type = (object["eventType"] as? String) ?? (object["notificationType"] as? String) ?? ""
        switch type {
        case "Bounce":
            let bounce = object["bounce"] as? [String: Any] ?? [:]
            let bounceType = bounce["bounceType"] as? String ?? ""
            let subType = bounce["bounceSubType"] as? String ?? ""
            let recipients = (bounce["bouncedRecipients"] as? [[String: Any]] ?? []).prefix(mostRecipients)
            return recipients.map { recipient in
                let status = recipient["status"] as? String ?? ""
                let detail = cleaned("amazon-ses \(bounceType)/\(subType) \(status)")
                return ProviderDeliveryEvent(
                    address: recipient["emailAddress"] as? String, reason: bounceType == "Permanent" ? .bounce : nil, detail: detail)
            }.orIgnored("amazon-ses: a bounce that names no recipient")
        case "Complaint":
            let complaint = object["complaint"] as? [String: Any] ?? [:]
            let feedback = complaint["complaintFeedbackType"] as? String ?? "abuse"
            let recipients = (complaint["complainedRecipients"] as? [[String: Any]] ?? []).prefix(mostRecipients)
            return recipients.map {
                ProviderDeliveryEvent(address: $0["emailAddress"] as? String, reason: .complaint, detail: cleaned("amazon-ses \(feedback)"))
            }.orIgnored("amazon-ses: a complaint that names no recipient")
        default:
            return [.ignored(cleaned("amazon-ses: \(type.isEmpty ? "no event type" : type)"))]
        }
    }

    /// The `Type`s of Postmark's bounce webhook that suppress: the address does not exist or will
    /// never take mail (Postmark deactivates it too). The rest (soft bounces, auto-replies,
    /// transient DNS errors…) are ignored.
    static let postmarkHardTypes: Set<String> = ["HardBounce", "BadEmailAddress", "ManuallyDeactivated"]

    /// The event of Postmark's bounce webhook (`RecordType` `Bounce`) or spam complaint webhook
    /// (`RecordType` `SpamComplaint`); nil when the body is not JSON.
    static func postmark(_ body: [UInt8]) -> [ProviderDeliveryEvent]? {
        guard let object = jsonObject(body) else { return nil }
        let record = object["RecordType"] as? String ?? ""
        let type = object["Type"] as? String ?? ""
        let address = object["Email"] as? String
        switch record {
        case "Bounce":
            let reason: SuppressionReason? = type == "SpamComplaint" ? .complaint : postmarkHardTypes.contains(type) ? .bounce : nil
            return [ProviderDeliveryEvent(address: address, reason: reason, detail: cleaned("postmark \(type)"))]
        case "SpamComplaint":
            return [ProviderDeliveryEvent(address: address, reason: .complaint, detail: cleaned("postmark \(type.isEmpty ? "SpamComplaint" : type)"))]
        default:
            return [.ignored(cleaned("postmark: \(record.isEmpty ? "no RecordType" : record)"))]
        }
    }

    /// The events of a Standard Webhooks provider's body in Resend's form: `email.bounced`
    /// (suppressed unless its `data.bounce.type` says `Transient`) and `email.complained`, each
    /// naming its recipients in `data.to`; nil when the body is not JSON.
    static func standardWebhook(_ body: [UInt8]) -> [ProviderDeliveryEvent]? {
        guard let object = jsonObject(body) else { return nil }
        let type = object["type"] as? String ?? ""
        let data = object["data"] as? [String: Any] ?? [:]
        let recipients: [String] = ((data["to"] as? [String]) ?? (data["to"] as? String).map { [$0] } ?? []).prefix(mostRecipients).map { $0 }
        switch type {
        case "email.bounced":
            let bounceType = (data["bounce"] as? [String: Any])?["type"] as? String ?? ""
            let reason: SuppressionReason? = bounceType == "Transient" ? nil : .bounce
            let detail = cleaned("standard-webhooks \(type)\(bounceType.isEmpty ? "" : " \(bounceType)")")
            return recipients.map { ProviderDeliveryEvent(address: $0, reason: reason, detail: detail) }
                .orIgnored("standard-webhooks: a bounce that names no recipient")
        case "email.complained":
            return recipients.map { ProviderDeliveryEvent(address: $0, reason: .complaint, detail: "standard-webhooks email.complained") }
                .orIgnored("standard-webhooks: a complaint that names no recipient")
        default:
            return [.ignored(cleaned("standard-webhooks: \(type.isEmpty ? "no type" : type)"))]
        }
    }

    /// `text` kept to letters, digits and `._/- `, at most 100 characters: a provider's words are
    /// stored and shown, so nothing else of theirs gets in (an address included).
    static func cleaned(_ text: String) -> String {
        let kept = text.unicodeScalars.filter {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._/- :".unicodeScalars.contains($0)
        }
        return String(String.UnicodeScalarView(kept.prefix(100))).trimmingCharacters(in: .whitespaces)
    }

    private static func jsonObject(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }
}

extension Array where Element == ProviderDeliveryEvent {
    /// The events, or one ignored event saying `why` when there are none.
    fileprivate func orIgnored(_ why: String) -> [ProviderDeliveryEvent] { isEmpty ? [.ignored(why)] : self }
}
