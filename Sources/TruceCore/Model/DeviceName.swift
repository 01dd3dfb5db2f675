import Foundation

/// The device names git accepts as author names.
enum DeviceName {
    /// A device name git accepts as an author name, or a clear error.
    static func validated(_ device: String) throws(TruceError) -> String {
        // Foundation's trimming costs more than the rest of a logged save's checks: only when there is something to trim.
        let outer = [device.unicodeScalars.first, device.unicodeScalars.last].compactMap { $0 }
        let trimmed = outer.contains(where: CharacterSet.whitespaces.contains) ? device.trimmingCharacters(in: .whitespaces) : device
        if trimmed.isEmpty { throw .invalidDeviceName(device, reason: "it is empty") }
        if trimmed.utf8.count > 256 { throw .invalidDeviceName(device, reason: "it is longer than 256 bytes") }
        if trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidDeviceName(device, reason: "it contains a control character")
        }
        // By scalar: `String.contains` would miss a '<' that a combining mark follows (one grapheme).
        if trimmed.unicodeScalars.contains(where: { $0 == "<" || $0 == ">" }) {
            throw .invalidDeviceName(device, reason: "git forbids '<' and '>' in author names")
        }
        return trimmed
    }
}
