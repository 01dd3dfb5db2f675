import Foundation

/// A grace period given on the command line, in git's forms: `now`, `never`, `2.weeks`, `3 days`, `1.hour.ago`.
enum ExpiryArgument {
    /// The grace period `text` names; nil when it does not parse. `never` is infinite.
    static func parse(_ text: String) -> TimeInterval? {
        let words = text.lowercased().split(whereSeparator: { $0 == "." || $0 == " " }).map(String.init)
        switch words {
        case ["now"]: return 0
        case ["never"]: return .infinity
        default: break
        }
        var parts = words
        if parts.last == "ago" { parts.removeLast() }
        guard parts.count == 2, let count = Double(parts[0]), count >= 0, count.isFinite else { return nil }
        var unit = parts[1]
        if unit.hasSuffix("s") && unit.count > 1 { unit.removeLast() }
        let seconds: Double? =
            switch unit {
            case "second": 1
            case "minute": 60
            case "hour": 3600
            case "day": 86400
            case "week": 7 * 86400
            case "month": 30 * 86400
            case "year": 365 * 86400
            default: nil
            }
        return seconds.map { $0 * count }
    }
}
