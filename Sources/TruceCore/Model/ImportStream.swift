import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ImportSource {
    /// The documents of a stream in the `filemodify … inline` subset of `git fast-import`'s format.
    ///
    /// Each record is a path line, a length line and that many bytes:
    ///
    ///     M 100644 inline notes/todo.md
    ///     data 9
    ///     buy milk
    ///
    /// The path runs to the end of its line, taken as it is (no quoting). One
    /// line feed after the bytes is optional, as in fast-import; blank lines
    /// and lines starting with `#` may come between records. A path given
    /// twice keeps its last record. A path that is not a valid key is refused
    /// by name; anything else malformed throws `malformedStream` with its line number, before anything is saved.
    public static func stream(_ data: Data, prefix: String = "") throws(TruceError) -> ImportSource {
        let keyPrefix = try validated(prefix)
        // Each document's content is a slice of `data`, sharing its storage: a stream of a million documents is
        // held once, not once more as bytes and once more per document.
        let data = data.startIndex == 0 ? data : Data(data)
        return try data.withUnsafeBytes { buffer in
            Result { () throws(TruceError) in try parse(buffer.bindMemory(to: UInt8.self), of: data, keyPrefix: keyPrefix) }
        }.get()
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, of data: Data, keyPrefix: String) throws(TruceError) -> ImportSource {
        var source = ImportSource(folder: nil)
        var index = 0
        var line = 1
        var positions: [DocumentKey: Int] = [:]
        /// The next line without its line feed, moving past it; nil at the end of the stream.
        func nextLine() -> Slice<UnsafeBufferPointer<UInt8>>? {
            guard index < bytes.count else { return nil }
            let base = bytes.baseAddress!
            let end = memchr(base + index, 0x0A, bytes.count - index).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) } ?? bytes.count
            defer {
                index = min(end + 1, bytes.count)
                line += 1
            }
            return bytes[index..<end]
        }
        let header = Array("M 100644 inline ".utf8), dataHeader = Array("data ".utf8)
        while let text = nextLine() {
            let headerLine = line - 1
            if text.isEmpty || text.first == UInt8(ascii: "#") { continue }
            guard text.starts(with: header), text.count > header.count else {
                throw .malformedStream(
                    line: headerLine,
                    reason: "expected 'M 100644 inline PATH', found \(TruceError.quoted(String(decoding: text.prefix(60), as: UTF8.self)))")
            }
            let path = Array(text.dropFirst(header.count))
            guard let lengthLine = nextLine(), lengthLine.starts(with: dataHeader),
                let length = Int(String(decoding: lengthLine.dropFirst(dataHeader.count), as: UTF8.self)), length >= 0,
                lengthLine.dropFirst(dataHeader.count).allSatisfy({ (0x30...0x39).contains($0) })
            else {
                throw .malformedStream(line: headerLine + 1, reason: "expected 'data LENGTH' (a byte count) after the path line")
            }
            guard bytes.count - index >= length else {
                throw .malformedStream(
                    line: headerLine + 1, reason: "the stream ends \(length - (bytes.count - index)) bytes before the \(length) bytes announced")
            }
            let content = data[index..<index + length]
            line += bytes[index..<index + length].count(where: { $0 == 0x0A })
            index += length
            if index < bytes.count, bytes[index] == 0x0A {
                index += 1
                line += 1
            }
            let shown = FileTree.display(path)
            guard let key = key(for: path, prefix: keyPrefix, shown: shown, refusing: &source.refused) else { continue }
            let entry = Entry(key: key, path: shown, content: .bytes(content))
            if let earlier = positions[key] {
                source.entries[earlier] = entry
            } else {
                positions[key] = source.entries.count
                source.entries.append(entry)
            }
        }
        return source
    }
}
