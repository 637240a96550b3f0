import Foundation
import PosternCore
import PosternCrypto

/// The hosted page's form token: binds a form to a browser (its CSRF cookie) and to the link it
/// was shown for, as an HMAC under the active action-code key. A key rotation in between
/// invalidates the form; the page says to reload it.
enum PageToken {
    static func make(cookie: String, oobCode: String, ring: KeyRing) -> String {
        Base64URL.encode(mac("page-form", cookie: cookie, oobCode: oobCode, ring: ring))
    }

    static func check(_ token: String, cookie: String, oobCode: String, ring: KeyRing) -> Bool {
        ConstantTime.equals(Array(token.utf8), Array(make(cookie: cookie, oobCode: oobCode, ring: ring).utf8))
    }

    /// The 3-digit number (100–999) a confirm page shows this browser for this link, and its form
    /// needs typed back. A mail scanner keeps cookies and submits every form with the values it
    /// finds, so the CSRF token is no defence against it; a number it would have to read off the
    /// page and type is. Derived, not stored: the same browser sees the same number on every view.
    /// Nil only if the active key cannot MAC (then no form can go).
    static func confirmNumber(cookie: String, oobCode: String, ring: KeyRing) -> String? {
        let bytes = mac("page-confirm", cookie: cookie, oobCode: oobCode, ring: ring)
        guard bytes.count >= 4 else { return nil }
        let value = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return String(100 + value % 900)
    }

    /// Whether `typed` (spaces around it allowed) is the number ``confirmNumber(cookie:oobCode:ring:)`` shows.
    static func checkConfirmNumber(_ typed: String?, cookie: String, oobCode: String, ring: KeyRing) -> Bool {
        guard let typed = typed?.trimmingCharacters(in: .whitespaces), !typed.isEmpty,
            let number = confirmNumber(cookie: cookie, oobCode: oobCode, ring: ring)
        else { return false }
        return ConstantTime.equals(Array(typed.utf8), Array(number.utf8))
    }

    private static func mac(_ purpose: String, cookie: String, oobCode: String, ring: KeyRing) -> [UInt8] {
        ring.actionCodes.digest(Array("\(purpose)|\(cookie)|\(oobCode)".utf8), keyID: ring.actionCodes.activeKeyID) ?? []
    }
}
