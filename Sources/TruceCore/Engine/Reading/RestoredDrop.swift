/// What a restore brings back: the value a resolution dropped, named in the restoring save's `Restores-Dropped:` trailer.
///
///     Restores-Dropped: <resolution id> <dropped version id> "/theme"
///
/// The place is quoted by `MessageEscaping` and left out for a decision about
/// the whole document.
struct RestoredDrop: Equatable {
    /// The resolution that dropped the value.
    var resolution: VersionID
    /// The head whose value it was.
    var version: VersionID
    /// The decision's place; nil for the whole document.
    var point: String?

    static let trailer = "Restores-Dropped"

    /// The trailer's value.
    var text: String {
        "\(resolution.hex) \(version.hex)" + (point.map { " " + MessageEscaping.escaped(Array($0.utf8), quoted: true) } ?? "")
    }

    /// Reads a trailer's value; nil when it is not one `text` writes.
    init?(parsing value: String) {
        let bytes = Array(value.utf8)
        guard bytes.count >= 81, bytes[40] == UInt8(ascii: " "),
            let resolution = VersionID(hex: String(decoding: bytes[0..<40], as: UTF8.self)),
            let version = VersionID(hex: String(decoding: bytes[41..<81], as: UTF8.self))
        else { return nil }
        self.resolution = resolution
        self.version = version
        guard bytes.count > 81 else { return }
        guard bytes[81] == UInt8(ascii: " "), let (point, rest) = MessageEscaping.unquoted(bytes[82...]), rest.isEmpty,
            let text = String(validating: point, as: UTF8.self)
        else { return nil }
        self.point = text
    }

    init(resolution: VersionID, version: VersionID, point: String?) {
        self.resolution = resolution
        self.version = version
        self.point = point
    }
}
