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

    /// What happened to the signed-in user's account, newest first (`GET /v1/me/activity`): sign-ins
    /// with their device and coarse network, password and address changes, providers and phones
    /// linked or removed, sessions ended. Pass the page's `nextCursor` as `after` for the next page
    /// (nil on the last).
    /// - Parameters:
    ///   - after: the `nextCursor` of the page before; nil for the newest.
    ///   - limit: entries on the page, 1 to 100 (the server's default 100 when nil).
    /// - Throws: `.invalidArgument` for a limit outside 1…100 or a cursor the server did not give,
    ///   `.notSignedIn`, network and server failures.
    public func activity(after cursor: String? = nil, limit: Int? = nil) async throws(PosternAuthError) -> ActivityListBody {
        var query: [String] = []
        if let limit { query.append("limit=\(limit)") }
        if let cursor { query.append("cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: Self.pathSegmentCharacters) ?? cursor)) }
        let path = query.isEmpty ? "/v1/me/activity" : "/v1/me/activity?" + query.joined(separator: "&")
        return try await authorized("GET", path, body: Optional<EmptyBody>.none, as: ActivityListBody.self)
    }

    /// What a path segment may hold unescaped.
    private static let pathSegmentCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
}
