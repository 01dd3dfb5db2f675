extension String {
    /// The pieces between each occurrence of the ASCII byte `separator`, empty pieces kept.
    ///
    /// Splits UTF-8, not graphemes: `String.split` keeps a separator that a
    /// combining mark follows inside one `Character`, and so misses it.
    func pieces(separatedBy separator: UInt8) -> [Substring] {
        precondition(separator < 0x80, "an ASCII byte never falls inside a multi-byte scalar")
        let bytes = utf8
        var pieces: [Substring] = []
        var start = bytes.startIndex
        for index in bytes.indices where bytes[index] == separator {
            pieces.append(Substring(bytes[start..<index]))
            start = bytes.index(after: index)
        }
        pieces.append(Substring(bytes[start...]))
        return pieces
    }
}
