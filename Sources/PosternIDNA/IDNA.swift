internal import CIDN2

/// Internationalized domain names through libidn2 (Debian's `libidn2-dev`): UTS #46
/// non-transitional mapping, then IDNA2008 validity, then Punycode — what browsers and mail
/// servers do, instead of a Punycode of our own that mapped nothing and checked nothing.
public enum IDNA {
    /// The ASCII ("xn--") form of `domain`, or nil when it is not a valid IDNA2008 name
    /// (disallowed code points, bad joiners, mixed directions, an empty label).
    public static func toASCII(_ domain: String) -> String? {
        var output: UnsafeMutablePointer<CChar>?
        let status = postern_idn2_lookup(domain, &output)
        defer { if let output { idn2_free(output) } }
        guard status == Int32(IDN2_OK.rawValue), let output else { return nil }
        return String(cString: output)
    }
}
