import Foundation
import PosternAPI

extension PosternAuth {
    // MARK: Sessions

    /// The signed-in user's sessions, newest first: device, coarse network, sign-in method and
    /// times; this device's is `current`.
    /// - Throws: `.notSignedIn`, network and server failures.
    public func sessions() async throws(PosternAuthError) -> [DeviceSessionBody] {
        try await authorized("GET", "/v1/me/sessions", body: Optional<EmptyBody>.none, as: DeviceSessionListBody.self).sessions
    }

    /// Ends one of the signed-in user's sessions (its refresh token; its ID tokens run out). Ending
    /// this device's own is allowed: it is signed out at its next refresh.
    /// - Throws: `.sessionNotFound` when the account has no such session (another account's included), `.notSignedIn`, network and server failures.
    public func revokeSession(id: String) async throws(PosternAuthError) {
        let segment = id.addingPercentEncoding(withAllowedCharacters: Self.pathSegmentCharacters) ?? id
        _ = try await authorized("DELETE", "/v1/me/sessions/\(segment)", body: Optional<EmptyBody>.none, as: NoContent.self)
    }

    /// Ends every session of the signed-in user but this device's.
    /// - Throws: `.notSignedIn`, network and server failures.
    public func revokeOtherSessions() async throws(PosternAuthError) {
        _ = try await authorized("POST", "/v1/me/sessions/revoke-others", body: EmptyBody(), as: NoContent.self)
    }

    /// What a path segment may hold unescaped.
    private static let pathSegmentCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
}
