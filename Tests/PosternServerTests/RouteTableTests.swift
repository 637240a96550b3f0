import PosternCore
@testable import PosternServer
import Testing

@Suite("Finding a request's route")
struct RouteTableTests {
    static let table = RouteTable([
        Route(method: "PATCH", path: "/v1/admin/users/{uid}", summary: "A user", access: .admin, status: 200) { _ throws(AuthError) in
            HTTPResponse(status: 200)
        },
        Route(method: "POST", path: "/v1/email-link/send", summary: "Send", access: .public, status: 202) { _ throws(AuthError) in
            HTTPResponse(status: 202)
        },
    ])

    static func uid(_ rawPath: String) -> String? {
        table.candidates(PercentDecoding.decodeRepairing(rawPath), rawPath: rawPath).first?.parameters["uid"]
    }

    @Test("a path parameter is decoded once, after the path is split at its raw slashes")
    func decodedOnceAfterTheSplit() {
        #expect(Self.uid("/v1/admin/users/plain") == "plain")
        #expect(Self.uid("/v1/admin/users/slash%2Fuid") == "slash/uid")
        // Twice decoded, `a%2541` was `aA`: another user.
        #expect(Self.uid("/v1/admin/users/a%2541") == "a%41")
        #expect(Self.uid("/v1/admin/users/a%41") == "aA")
        #expect(Self.uid("/v1/admin/users/ab%3Fcd") == "ab?cd")
        // A `%` without two hex digits stays; bytes that are not UTF-8 become U+FFFD.
        #expect(Self.uid("/v1/admin/users/100%") == "100%")
        #expect(Self.uid("/v1/admin/users/%FF") == "\u{FFFD}")
        #expect(Self.uid("/v1/admin/users/slash/uid") == nil)
        #expect(Self.uid("/v1/admin/users/") == nil)
    }

    @Test("a fixed path is found by its decoded form, a pattern's fixed segments by theirs")
    func fixedSegmentsDecoded() {
        #expect(Self.table.candidates("/v1/email-link/send", rawPath: "/v1/email%2Dlink/send").first?.route.method == "POST")
        #expect(Self.uid("/v1/admin/%75sers/x") == "x")
        #expect(Self.table.candidates("/v1/email-link/sent", rawPath: "/v1/email-link/sent").isEmpty)
        // An encoded slash is data, never a separator: it reaches no fixed path.
        #expect(Self.table.candidates("/v1/email-link/send", rawPath: "/v1/email-link%2Fsend").isEmpty)
        #expect(Self.table.candidates("/v1/email-link/send", rawPath: "/v1%2femail-link%2Fsend").isEmpty)
    }
}
