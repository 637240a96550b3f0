import PosternCore
import PosternCrypto

/// The hosted page's form token: binds a form to a browser (its CSRF cookie) and to the link it
/// was shown for, as an HMAC under the active action-code key. A key rotation in between
/// invalidates the form; the page says to reload it.
enum PageToken {
    static func make(cookie: String, oobCode: String, ring: KeyRing) -> String {
        let mac = ring.actionCodes.digest(Array("page-form|\(cookie)|\(oobCode)".utf8), keyID: ring.actionCodes.activeKeyID) ?? []
        return Base64URL.encode(mac)
    }

    static func check(_ token: String, cookie: String, oobCode: String, ring: KeyRing) -> Bool {
        ConstantTime.equals(Array(token.utf8), Array(make(cookie: cookie, oobCode: oobCode, ring: ring).utf8))
    }
}
