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
        try stream(data, mappedFrom: nil, prefix: prefix)
    }

    /// The documents of the stream `handle` reads to its end, as `stream(_:prefix:)` reads them.
    ///
    /// A regular file read from its start is mapped rather than read, and
    /// its pages are let go as they are parsed and as each batch is read:
    /// an import's memory then follows the batch, not the file. Anything else
    /// (a pipe, a terminal) is read whole first.
    public static func stream(reading handle: FileHandle, prefix: String = "") throws(TruceError) -> ImportSource {
        if let mapping = MappedStream(descriptor: handle.fileDescriptor) {
            return try stream(mapping.bytes, mappedFrom: mapping, prefix: prefix)
        }
        return try stream(handle.readDataToEndOfFile(), prefix: prefix)
    }

    private static func stream(_ data: Data, mappedFrom mapping: MappedStream?, prefix: String) throws(TruceError) -> ImportSource {
        let keyPrefix = try validated(prefix)
        // Each document's content is a slice of `data`, sharing its storage: a stream of a million documents is
        // held once, not once more as bytes and once more per document.
        let data = data.startIndex == 0 ? data : Data(data)
        let parsed = try data.withUnsafeBytes { buffer in
            Result { () throws(TruceError) in try parse(buffer.bindMemory(to: UInt8.self), mappedFrom: mapping, keyPrefix: keyPrefix) }
        }.get()
        var source = ImportSource(folder: nil)
        source.refused = parsed.refused
        source.records = StreamRecords(data: data, keyPrefix: keyPrefix, mapping: mapping, parsed: parsed.records)
        return source
    }

    /// Bytes of a mapped stream parsed between lettings go of its pages.
    private static let parsedBetweenLettingGo = 1 << 24

    /// Every record of `bytes` whose path makes a valid key, in order (a path given twice, twice); the others refused.
    private static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, mappedFrom mapping: MappedStream?, keyPrefix: String
    ) throws(TruceError) -> (records: [StreamRecords.Record], refused: [ImportReport.PathIssue]) {
        var records: [StreamRecords.Record] = []
        var refused: [ImportReport.PathIssue] = []
        var index = 0
        var line = 1
        var lastLetGo = 0
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
            if let mapping, index - lastLetGo >= parsedBetweenLettingGo {
                mapping.letGo()
                lastLetGo = index
            }
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
            let content = index..<index + length
            line += bytes[content].count(where: { $0 == 0x0A })
            index += length
            if index < bytes.count, bytes[index] == 0x0A {
                index += 1
                line += 1
            }
            guard key(for: path, prefix: keyPrefix, shown: FileTree.display(path), refusing: &refused) != nil else { continue }
            records.append(StreamRecords.Record(path: (text.startIndex + header.count)..<text.endIndex, content: content))
        }
        return (records, refused)
    }
}
