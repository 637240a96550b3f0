/// A device's name as the approval page shows it, read from a User-Agent: "Chrome on Linux",
/// "Safari on iPhone". Only the broad family: the page needs the owner to recognise the device,
/// not to fingerprint it.
struct DeviceName: Sendable, Hashable {
    /// The name.
    let text: String

    init(userAgent: String?) {
        guard let agent = userAgent, !agent.isEmpty else {
            text = "another device"
            return
        }
        let browser: String? =
            if agent.contains("Edg/") { "Edge" }
            else if agent.contains("OPR/") { "Opera" }
            else if agent.contains("Firefox/") { "Firefox" }
            else if agent.contains("Chrome/") || agent.contains("Chromium/") { "Chrome" }
            else if agent.contains("Safari/") { "Safari" }
            else if agent.contains("CFNetwork/") { "an app" }
            else { nil }
        let system: String? =
            if agent.contains("iPhone") { "iPhone" }
            else if agent.contains("iPad") { "iPad" }
            else if agent.contains("Android") { "Android" }
            else if agent.contains("CrOS") { "ChromeOS" }
            else if agent.contains("Mac OS X") || agent.contains("Macintosh") || agent.contains("Darwin/") { "macOS" }
            else if agent.contains("Windows") { "Windows" }
            else if agent.contains("Linux") { "Linux" }
            else { nil }
        text = switch (browser, system) {
        case (let browser?, let system?): "\(browser) on \(system)"
        case (let browser?, nil): browser
        case (nil, let system?): "a device with \(system)"
        case (nil, nil): "another device"
        }
    }
}
