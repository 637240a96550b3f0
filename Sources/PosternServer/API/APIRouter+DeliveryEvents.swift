import PosternAPI
import PosternCore

extension APIRouter {
    /// The providers' delivery events (`service.deliveryEvents`): public routes, each
    /// authenticated by its provider's own means, each 404 until configured.
    static func deliveryEventRoutes(_ runtime: ServerContext) -> [Route] {
        let intake = runtime.service.deliveryEvents
        let refusals: [APIErrorCode] = [.invalidArgument, .unauthorized, .notFound]
        return [
            Route(method: "POST", path: "/v1/delivery-events/ses", summary: "Amazon SES bounces and complaints through an SNS HTTPS subscription (--ses-topic-arns): signed by SNS, checked against the certificate of an SNS host; a signed SubscriptionConfirmation is confirmed", access: .public, status: 200,
                  contract: .init(
                    request: .raw(
                        mediaTypes: ["text/plain", "application/json"],
                        description: "The SNS message as SNS posts it: a JSON object with Type, MessageId, TopicArn, Message, Timestamp, SignatureVersion, Signature and SigningCertURL (and SubscribeURL, Token for a confirmation)."),
                    answer: .json(DeliveryEventResultBody.self), errors: refusals + [.unavailable])) { c throws(AuthError) in
                .body(200, DeliveryEventResultBody(try intake.ses(c.request.body)))
            },
            Route(method: "POST", path: "/v1/delivery-events/postmark", summary: "Postmark's bounce and spam complaint webhooks, sent with the HTTP Basic credentials of --postmark-webhook-credentials-file", access: .public, status: 200,
                  contract: .init(
                    request: .raw(
                        mediaTypes: ["application/json"],
                        description: "Postmark's webhook body: RecordType Bounce (Type HardBounce, BadEmailAddress… suppress; soft ones are ignored) or SpamComplaint, with the recipient in Email."),
                    answer: .json(DeliveryEventResultBody.self), errors: refusals)) { c throws(AuthError) in
                .body(200, DeliveryEventResultBody(try intake.postmark(c.request.body, authorization: c.request.headers["authorization"])))
            },
            Route(method: "POST", path: "/v1/delivery-events/standard-webhooks", summary: "A Standard Webhooks provider's email.bounced and email.complained events (Resend), signed with a secret of --delivery-webhook-secret-file", access: .public, status: 200,
                  contract: .init(
                    request: .raw(
                        mediaTypes: ["application/json"],
                        description: "The event, signed in the webhook-id, webhook-timestamp and webhook-signature headers (or svix-id, svix-timestamp, svix-signature): type email.bounced or email.complained, the recipients in data.to."),
                    answer: .json(DeliveryEventResultBody.self), errors: refusals)) { c throws(AuthError) in
                let headers = c.request.headers
                let result = try intake.standardWebhook(
                    c.request.body, id: headers["webhook-id"] ?? headers["svix-id"],
                    timestamp: headers["webhook-timestamp"] ?? headers["svix-timestamp"],
                    signature: headers["webhook-signature"] ?? headers["svix-signature"])
                return .body(200, DeliveryEventResultBody(result))
            },
        ]
    }
}

extension DeliveryEventResultBody {
    /// The body of `result`.
    init(_ result: DeliveryEventResult) { self.init(suppressed: result.suppressed, ignored: result.ignored) }
}
