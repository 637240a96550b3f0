import Foundation
import PosternAPI
import PosternCore

extension APIRouter {
    /// A user's sessions and activity (API.md "Sessions and activity"): the owner's under
    /// `/v1/me/sessions` and `/v1/me/activity`, the operator's view of any account's under
    /// `/v1/admin/users/{uid}/…`.
    static func sessionRoutes(_ runtime: ServerContext) -> [Route] {
        let service = runtime.service
        let sessionPath: [String: JSONSchema] = ["id": .string("The session's id (`id` in the list; the ID token's `sid`).")]
        let activityQuery: [RouteContract.Query] = [
            .init(name: "limit", schema: .integer(minimum: 1, maximum: Int64(SessionFlow.activityPageLimit)), required: false,
                  description: "The most to list (default 100, at most \(SessionFlow.activityPageLimit))."),
            .init(name: "cursor", schema: .string("A `nextCursor` this route answered (opaque: no other is taken).", pattern: "^[A-Za-z0-9_-]+$", minLength: 1), required: false,
                  description: "Continue after the page that answered it."),
        ]
        @Sendable func activityPage(_ c: RouteContext) throws(AuthError) -> (limit: Int, cursor: ActivityCursor?) {
            try c.page(maximum: SessionFlow.activityPageLimit) { ActivityCursor(text: $0) }
        }
        return [
            Route(method: "GET", path: "/v1/me/sessions", summary: "The account's sessions: device, network, sign-in method, times; the caller's marked `current`", access: .user, status: 200,
                  contract: .init(answer: .json(DeviceSessionListBody.self))) { c throws(AuthError) in
                let (sessions, current) = try service.sessions.deviceSessions(idToken: try c.idToken())
                return .body(200, DeviceSessionListBody(sessions: sessions.map { DeviceSessionBody($0, current: current) }))
            },
            Route(method: "DELETE", path: "/v1/me/sessions/{id}", summary: "Revoke one of the account's sessions (its refresh token; its ID tokens run out)", access: .user, status: 204,
                  contract: .init(answer: .noContent, errors: [.sessionNotFound], pathParameters: sessionPath)) { c throws(AuthError) in
                try service.sessions.revokeSession(idToken: try c.idToken(), id: c.parameters["id"] ?? "")
                return HTTPResponse(status: 204)
            },
            Route(method: "POST", path: "/v1/me/sessions/revoke-others", summary: "Revoke every session of the account but the caller's", access: .user, status: 204,
                  contract: .init(request: .json(EmptyBody.self), answer: .noContent)) { c throws(AuthError) in
                let token = try c.idToken()
                _ = try c.body(EmptyBody.self)
                try service.sessions.revokeOtherSessions(idToken: token)
                return HTTPResponse(status: 204)
            },
            Route(method: "GET", path: "/v1/me/activity", summary: "What happened to the account, newest first (sign-ins, password and address changes, phones, revoked sessions)", access: .user, status: 200,
                  contract: .init(answer: .json(ActivityListBody.self), errors: [.invalidArgument], query: activityQuery)) { c throws(AuthError) in
                let token = try c.idToken()
                let (limit, cursor) = try activityPage(c)
                return .body(200, ActivityListBody(try service.sessions.activity(idToken: token, after: cursor, limit: limit)))
            },
            Route(method: "GET", path: "/v1/admin/users/{uid}/sessions", summary: "A user's sessions", access: .admin, status: 200,
                  contract: .init(answer: .json(DeviceSessionListBody.self), errors: [.userNotFound], pathParameters: ["uid": .uid])) { c throws(AuthError) in
                let sessions = try service.operators.sessions(uid: c.parameters["uid"] ?? "")
                return .body(200, DeviceSessionListBody(sessions: sessions.map { DeviceSessionBody($0, current: nil) }))
            },
            Route(method: "DELETE", path: "/v1/admin/users/{uid}/sessions/{id}", summary: "Revoke one of a user's sessions", access: .admin, status: 204,
                  contract: .init(answer: .noContent, errors: [.sessionNotFound], pathParameters: sessionPath.merging(["uid": .uid]) { a, _ in a })) { c throws(AuthError) in
                try service.operators.revokeSession(uid: c.parameters["uid"] ?? "", id: c.parameters["id"] ?? "")
                return HTTPResponse(status: 204)
            },
            Route(method: "GET", path: "/v1/admin/users/{uid}/activity", summary: "A user's activity, newest first", access: .admin, status: 200,
                  contract: .init(answer: .json(ActivityListBody.self), errors: [.invalidArgument, .userNotFound], query: activityQuery,
                                  pathParameters: ["uid": .uid])) { c throws(AuthError) in
                let (limit, cursor) = try activityPage(c)
                return .body(200, ActivityListBody(try service.operators.activity(uid: c.parameters["uid"] ?? "", after: cursor, limit: limit)))
            },
        ]
    }
}

extension DeviceSessionBody {
    /// What the list says of `session`; `current` is the caller's session id (nil: none is).
    public init(_ session: DeviceSession, current: String?) {
        self.init(
            id: session.id, deviceName: session.deviceName, network: session.network, method: session.method, clientId: session.clientID,
            createdAt: UTCTimestamp.iso8601(session.createdAt), lastUsedAt: UTCTimestamp.iso8601(session.lastUsedAt),
            current: current == session.id)
    }
}

extension ActivityListBody {
    /// A page of activity as the API answers it.
    public init(_ page: ActivityPage) {
        self.init(
            activity: page.entries.map {
                ActivityEntryBody(at: UTCTimestamp.iso8601($0.at), kind: $0.kind, method: $0.method, deviceName: $0.deviceName, network: $0.network)
            },
            nextCursor: page.next?.text)
    }
}
