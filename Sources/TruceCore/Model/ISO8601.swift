import Foundation

/// ISO 8601 dates as Truce prints them: `2026-11-30T20:15:00Z`.
package enum ISO8601 {
    /// Formats `date` in UTC to the second: `2026-11-30T20:15:00Z`.
    package static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }
}
