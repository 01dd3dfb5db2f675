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

extension ISO8601 {
    /// Reads exactly what `format` writes, `2026-11-30T20:15:00Z`, and nothing else (no other zone, no fraction).
    package static func parseStrict(_ bytes: some Collection<UInt8>) -> Date? {
        let text = Array(bytes)
        let digitPositions = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard text.count == 20, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"), text[19] == UInt8(ascii: "Z"),
            digitPositions.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[$0]) })
        else { return nil }
        func number(_ range: Range<Int>) -> Int { text[range].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } }
        var components = DateComponents()
        (components.year, components.month, components.day) = (number(0..<4), number(5..<7), number(8..<10))
        (components.hour, components.minute, components.second) = (number(11..<13), number(14..<16), number(17..<19))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        // A day or hour out of range would roll over: only a date that prints back as the same text is one.
        guard let date = calendar.date(from: components), Array(format(date).utf8) == text else { return nil }
        return date
    }
}
