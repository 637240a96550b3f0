/// What the settings of a provider reached over HTTP (the mail provider, the `json:` SMS gateway)
/// check and log of its URL, in one place: both sign their POSTs, so neither URL needs
/// credentials, and a query may hold a provider's token.
public enum ProviderURL {
    /// The authority of an `http(s)://` URL: what stands between `//` and the path, query or fragment.
    static func authority(of url: String) -> Substring {
        url.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    /// Whether the URL carries user info (`user:password@`).
    static func carriesCredentials(_ url: String) -> Bool { authority(of: url).contains("@") }

    /// The URL up to its path, for logs: a query is shown as `?…`.
    public static func forLog(_ url: String) -> String {
        url.firstIndex(of: "?").map { String(url[..<$0]) + "?…" } ?? url
    }
}
