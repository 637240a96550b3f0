import PosternAPI

/// Who a hook is asked about: the account (its uid, new or not), its address or number, how it
/// signs in, and for token claims the OpenID Connect client the tokens are for.
public struct HookSubject: Sendable, Hashable {
    /// The account's uid (a new account's: the one it will be created with).
    public var uid: String
    public var email: String?
    /// E.164, for a sign-in by phone.
    public var phoneNumber: String?
    /// `emailLink`, `password`, `phone`, `anonymous`, or a provider's (`apple`, `google`, …).
    public var method: String
    /// Whether the sign-in creates the account (or gives an anonymous one its first address or number).
    public var isNewUser: Bool
    /// The OpenID Connect client the tokens are for (token_claims of the provider's tokens).
    public var clientID: String?

    public init(uid: String, email: String?, phoneNumber: String? = nil, method: String, isNewUser: Bool, clientID: String? = nil) {
        self.uid = uid
        self.email = email
        self.phoneNumber = phoneNumber
        self.method = method
        self.isNewUser = isNewUser
        self.clientID = clientID
    }

    /// The decision hook that is asked about this subject.
    var decisionHook: HookKind { isNewUser ? .beforeSignUp : .beforeSignIn }

    /// The request's `data` object: absent fields are left out.
    var data: [String: JSONValue] {
        var data: [String: JSONValue] = ["uid": .string(uid), "method": .string(method), "isNewUser": .bool(isNewUser)]
        if let email { data["email"] = .string(email) }
        if let phoneNumber { data["phoneNumber"] = .string(phoneNumber) }
        if let clientID { data["client_id"] = .string(clientID) }
        return data
    }

    /// The request body, the Standard Webhooks envelope as the webhooks': `{"data":…,"timestamp":…,"type":…}`.
    func body(_ hook: HookKind, at time: Int64) -> String {
        JSONValue.object(["type": .string(hook.rawValue), "timestamp": .string(UTCTimestamp.iso8601(time)), "data": .object(data)]).sortedJSONText
    }
}
