import Foundation
import PosternCore
@testable import PosternServer
import Testing

/// `/.well-known/apple-app-site-association` and `/.well-known/assetlinks.json` through the
/// router: the documented shapes field by field, JSON with 200 and no redirect, 404 without apps.
@Suite("App association files")
struct AppLinksTests {
    static let fingerprintA = (0..<32).map { String(format: "%02X", $0 * 7 % 256) }.joined(separator: ":")
    static let fingerprintB = (0..<32).map { String(format: "%02x", 255 - $0) }.joined(separator: ":")

    @Test("Apple's file: applinks.details[] with appIDs and a component for the action path, webcredentials.apps")
    func apple() throws {
        let (router, _) = try RouterTests.harness { settings in
            settings.publicURL = "https://auth.example.com"
            settings.appleAppIDs = [try? AppleAppID(parsing: "ABCDE12345.com.example.app"), try? AppleAppID(parsing: "9JA89QQLNQ.com.example.beta")].compactMap { $0 }
        }
        let answer = router.handle(RouterTests.request("GET", "/.well-known/apple-app-site-association"))
        #expect(answer.status == 200)
        #expect(RouterTests.header(answer, "Content-Type") == "application/json")
        #expect(RouterTests.header(answer, "Location") == nil)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect(Set(document.keys) == ["applinks", "webcredentials"])
        let applinks = try #require(document["applinks"] as? [String: Any])
        #expect(Set(applinks.keys) == ["details"], "the iOS 13+ form: no legacy apps: []")
        let details = try #require(applinks["details"] as? [[String: Any]])
        #expect(details.count == 1)
        #expect(details[0]["appIDs"] as? [String] == ["ABCDE12345.com.example.app", "9JA89QQLNQ.com.example.beta"])
        let components = try #require(details[0]["components"] as? [[String: Any]])
        #expect(components.count == 1 && components[0]["/"] as? String == "/action" && components[0]["comment"] is String)
        #expect(Set(components[0].keys) == ["/", "comment"])
        let credentials = try #require(document["webcredentials"] as? [String: Any])
        #expect(credentials["apps"] as? [String] == ["ABCDE12345.com.example.app", "9JA89QQLNQ.com.example.beta"])
        // The raw text has the slash unescaped, as Apple's examples do.
        #expect(String(decoding: answer.body, as: UTF8.self).contains(#"{"/":"/action","#))
        let head = router.handle(RouterTests.request("HEAD", "/.well-known/apple-app-site-association"))
        #expect(head.status == 200 && head.body.isEmpty && RouterTests.header(head, "Content-Type") == "application/json")
    }

    @Test("the action path follows a public URL with a path")
    func actionPathUnderAPrefix() {
        #expect(AppAssociationFiles.actionPath(publicURL: "https://example.com/auth") == "/auth/action")
        #expect(AppAssociationFiles.actionPath(publicURL: "https://example.com/auth/") == "/auth/action")
        #expect(AppAssociationFiles.actionPath(publicURL: "http://127.0.0.1:8080") == "/action")
    }

    @Test("Google's file: one handle_all_urls statement per package, with each of its fingerprints, upper-case")
    func android() throws {
        let (router, _) = try RouterTests.harness { settings in
            settings.androidApps = (try? AndroidApp.list(
                "com.example.app:\(Self.fingerprintA),org.example.other:\(Self.fingerprintA),com.example.app:\(Self.fingerprintB)")) ?? []
        }
        let answer = router.handle(RouterTests.request("GET", "/.well-known/assetlinks.json"))
        #expect(answer.status == 200 && RouterTests.header(answer, "Content-Type") == "application/json")
        let statements = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]])
        #expect(statements.count == 2)
        for statement in statements {
            #expect(Set(statement.keys) == ["relation", "target"])
            #expect(statement["relation"] as? [String] == ["delegate_permission/common.handle_all_urls"])
            let target = try #require(statement["target"] as? [String: Any])
            #expect(Set(target.keys) == ["namespace", "package_name", "sha256_cert_fingerprints"])
            #expect(target["namespace"] as? String == "android_app")
        }
        let targets = statements.compactMap { $0["target"] as? [String: Any] }
        #expect(targets.map { $0["package_name"] as? String } == ["com.example.app", "org.example.other"])
        #expect(targets[0]["sha256_cert_fingerprints"] as? [String] == [Self.fingerprintA, Self.fingerprintB.uppercased()])
        #expect(targets[1]["sha256_cert_fingerprints"] as? [String] == [Self.fingerprintA])
    }

    @Test("without the settings both files answer 404 NOT_FOUND, and both are in the contract either way")
    func absent() throws {
        let (router, _) = try RouterTests.harness()
        for path in ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json"] {
            let answer = router.handle(RouterTests.request("GET", path))
            #expect(answer.status == 404 && RouterTests.errorCode(answer) == "NOT_FOUND", "\(path)")
            #expect(router.routeTable.contains { $0.method == "GET" && $0.path == path })
            let wrong = router.handle(RouterTests.request("POST", path, body: "{}"))
            #expect(wrong.status == 405 && RouterTests.header(wrong, "Allow") == "GET")
        }
        let document = String(decoding: router.handle(RouterTests.request("GET", "/openapi.json")).body, as: UTF8.self)
        #expect(document.contains("/.well-known/apple-app-site-association") && document.contains("/.well-known/assetlinks.json"))
    }
}
