import Foundation

extension TextMerge {
    /// The conflict marker size to merge `contents` with: `requested`, or longer than any marker-like line they hold.
    ///
    /// A line that starts with as many `<`, `|`, `=` or `>` as the markers have
    /// would be taken for a marker by whoever resolves the conflict (git has the
    /// `conflict-marker-size` attribute for such files); markers one longer than
    /// the longest such run at a line start cannot be confused with the
    /// content, as jj chooses them. Content with no such line keeps `requested`.
    /// At most `maximumMarkerSize`.
    public static func markerSize(_ requested: Int, avoiding contents: [Data]) -> Int {
        let size = requested > 0 ? requested : 7
        var longest = 0
        let markerBytes: [UInt8] = [UInt8(ascii: "<"), UInt8(ascii: "|"), UInt8(ascii: "="), UInt8(ascii: ">")]
        for content in contents {
            content.withUnsafeBytes { bytes in
                var index = 0
                while index < bytes.count {
                    // At a line start: the run of one marker character there, then on to the next line.
                    let first = bytes[index]
                    if markerBytes.contains(first) {
                        var end = index + 1
                        while end < bytes.count && bytes[end] == first { end += 1 }
                        longest = max(longest, end - index)
                        index = end
                    }
                    while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                    index += 1
                }
            }
        }
        return longest >= size ? min(longest + 1, maximumMarkerSize) : size
    }
}
