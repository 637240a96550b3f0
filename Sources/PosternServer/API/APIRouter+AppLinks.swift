import Foundation
import PosternAPI
import PosternCore

/// The files that let the apps open the action links (universal links, App Links) instead of the
/// browser: made once from the settings, served as JSON with no redirect, 404 when no app is set.
enum AppAssociationFiles {
    /// The path of the action links under the public URL (`/action`, or `/auth/action` when the
    /// public URL has a path): the one path the apps claim, so every other page stays in the browser.
    static func actionPath(publicURL: String) -> String {
        let base = URLComponents(string: publicURL)?.path ?? ""
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/action"
    }

    /// Apple's `apple-app-site-association` (the iOS 13+ form): the apps may open the action
    /// links (`applinks`, matched on the path) and use the site's passwords and passkeys
    /// (`webcredentials`). Nil without apps.
    static func apple(_ ids: [AppleAppID], publicURL: String) -> String? {
        guard !ids.isEmpty else { return nil }
        let names = ids.map(\.description)
        let document: JSONValue = .object([
            "applinks": .object([
                "details": .array([
                    .object([
                        "appIDs": .array(strings: names),
                        "components": .array([
                            .object(strings: [
                                "/": actionPath(publicURL: publicURL), "comment": "Postern's action links: sign-in, reset, verify, change and recover",
                            ])
                        ]),
                    ])
                ])
            ]),
            "webcredentials": .object(["apps": .array(strings: names)]),
        ])
        return document.sortedJSONText
    }

    /// Google's Digital Asset Links statement list: each package may handle all of the site's
    /// URLs, with every fingerprint given for it. Nil without apps.
    static func android(_ apps: [AndroidApp]) -> String? {
        guard !apps.isEmpty else { return nil }
        var packages: [String] = []
        var fingerprints: [String: [String]] = [:]
        for app in apps {
            if fingerprints[app.packageName] == nil { packages.append(app.packageName) }
            fingerprints[app.packageName, default: []].append(app.fingerprint)
        }
        let statements: [JSONValue] = packages.map { package in
            .object([
                "relation": .array(strings: ["delegate_permission/common.handle_all_urls"]),
                "target": .object([
                    "namespace": .string("android_app"), "package_name": .string(package),
                    "sha256_cert_fingerprints": .array(strings: fingerprints[package] ?? []),
                ]),
            ])
        }
        return JSONValue.array(statements).sortedJSONText
    }
}

extension APIRouter {
    /// `/.well-known/apple-app-site-association` and `/.well-known/assetlinks.json`.
    static func appLinkRoutes(_ runtime: ServerContext) -> [Route] {
        let settings = runtime.settings
        let apple = AppAssociationFiles.apple(settings.appleAppIDs, publicURL: settings.publicURL)
        let android = AppAssociationFiles.android(settings.androidApps)
        return [
            Route(method: "GET", path: "/.well-known/apple-app-site-association", summary: "Apple apps that open the action links (--apple-app-ids; 404 without)", access: .operations, status: 200,
                  contract: .init(
                      answer: .content(mediaType: "application/json", schema: .anyObject("Apple's apple-app-site-association: applinks and webcredentials.")),
                      errors: [.notFound])) { _ throws(AuthError) in
                try associationFile(apple, setting: "--apple-app-ids")
            },
            Route(method: "GET", path: "/.well-known/assetlinks.json", summary: "Android apps that open the action links (--android-apps; 404 without)", access: .operations, status: 200,
                  contract: .init(
                      answer: .content(mediaType: "application/json", schema: .array(.anyObject("A Digital Asset Links statement."), "Google's Digital Asset Links statements.")),
                      errors: [.notFound])) { _ throws(AuthError) in
                try associationFile(android, setting: "--android-apps")
            },
        ]
    }

    private static func associationFile(_ document: String?, setting: String) throws(AuthError) -> HTTPResponse {
        guard let document else { throw .noAppsConfigured(setting) }
        var response = HTTPResponse.json(200, document)
        // Apple's CDN and Android's verifier fetch it now and then; an hour is fresh enough.
        response.headers.append(("Cache-Control", "public, max-age=3600"))
        return response
    }
}
