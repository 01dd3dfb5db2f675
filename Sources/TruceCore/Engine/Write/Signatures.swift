import Foundation
internal import TruceGit

extension Signature {
    /// The dates libgit2 writes exactly: it prints a signature's time as an unsigned 32-bit number of seconds,
    /// so an earlier or later date would wrap (1900 would be stored as 2036 and win "current").
    static let representableDates = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: TimeInterval(UInt32.max))

    /// `date`, when git can store it exactly; a clear error otherwise.
    static func checkRepresentable(_ date: Date) throws(TruceError) {
        // Stored to the second, rounded down, as `init(device:date:)` does.
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds <= Double(UInt32.max) else { throw .dateOutOfRange(date) }
    }

    /// The author line of a device: its name, a made-up address git requires (`laptop@truce`), the date to the second in UTC.
    init(device: String, date: Date) {
        var slug = String.UnicodeScalarView()
        for scalar in device.lowercased().unicodeScalars {
            // ASCII first: CharacterSet's lookup is most of a logged save's cost of making its signature.
            let kept = scalar.isASCII ? (("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)) : CharacterSet.alphanumerics.contains(scalar)
            slug.append(kept ? scalar : "-")
        }
        self.init(name: device, email: String(slug) + "@truce", time: Int64(date.timeIntervalSince1970.rounded(.down)), offsetMinutes: 0)
    }
}
