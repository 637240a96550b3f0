import PosternCrypto

extension AuthService {
    /// A token binding a hosted page's form to a browser (its CSRF cookie) and to the link it was
    /// shown for: HMAC under the active action-code key. A key rotation in between invalidates
    /// the form; the page says to reload it.
    public func pageToken(cookie: String, oobCode: String) -> String {
        let ring = keys.current
        let mac = ring.actionCodes.digest(Array("page-form|\(cookie)|\(oobCode)".utf8), keyID: ring.actionCodes.activeKeyID) ?? []
        return Base64URL.encode(mac)
    }

    /// Whether `token` is `pageToken(cookie:oobCode:)` for these values, in constant time.
    public func checkPageToken(_ token: String, cookie: String, oobCode: String) -> Bool {
        ConstantTime.equals(Array(token.utf8), Array(pageToken(cookie: cookie, oobCode: oobCode).utf8))
    }
}
