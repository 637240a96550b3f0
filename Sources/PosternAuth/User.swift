import Foundation
import PosternAPI

/// The signed-in user's profile, as `GET /v1/me` answers it.
public struct User: Sendable, Hashable, Codable {
    /// The account's id.
    public let uid: String
    /// The address, nil for an anonymous account.
    public let email: String?
    /// Whether the address was proven by a link.
    public let isEmailVerified: Bool
    /// The name the user gave.
    public let displayName: String?
    /// The app's own profile fields (a bio, …); the owner's alone.
    public let attributes: [String: JSONValue]
    /// How the account can sign in: `emailLink`, `password`, `phone`, `anonymous`, and the
    /// identity providers linked to it: `apple`, `google`, `oidc:<id>`.
    public let providers: [String]
    /// Whether this is a guest account with no address yet.
    public let isAnonymous: Bool

    init(_ body: UserBody) {
        uid = body.uid
        email = body.email
        isEmailVerified = body.emailVerified
        displayName = body.displayName
        attributes = body.attributes
        providers = body.providers
        isAnonymous = body.isAnonymous
    }
}
