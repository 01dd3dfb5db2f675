import Foundation

/// The records of an import stream, held as places in the stream's bytes rather than one entry each: a stream of a
/// million documents held a key, a display path and an entry per record, 180 MB beside the stream's own 141.
///
/// A record's key and path are made when the import reaches its batch
/// (`entry(at:)`). The stream's bytes are either read into memory or mapped
/// from a regular file (`mapping`), whose pages are let go as the import
/// copies each batch's contents out.
struct StreamRecords: Sendable {
    /// Where one record's path and content lie in the stream.
    struct Record: Sendable {
        let path: Range<Int>
        var content: Range<Int>
    }

    let data: Data
    /// What goes before every key (empty, or a folder ending in `/`).
    let keyPrefix: String
    /// The file the bytes are mapped from, when they are.
    let mapping: MappedStream?
    /// One record per path, in the order each path first came, with the content of its last record.
    let records: [Record]
    /// The positions of `records` in key order.
    let keyOrder: [Int]

    /// `records` as parsed, a path given twice keeping its first place and its last content; then ordered by key,
    /// which is the order of the paths' bytes (every key has the same prefix).
    init(data: Data, keyPrefix: String, mapping: MappedStream?, parsed: [Record]) {
        (self.data, self.keyPrefix, self.mapping) = (data, keyPrefix, mapping)
        let byPath = data.withUnsafeBytes { bytes in
            // Stable: of two records of one path, the earlier comes first.
            parsed.indices.sorted { left, right in
                let order = Self.compare(bytes, parsed[left].path, parsed[right].path)
                return order != 0 ? order < 0 : left < right
            }
        }
        var records = parsed
        var kept = [Bool](repeating: true, count: parsed.count)
        var order: [Int] = []
        order.reserveCapacity(parsed.count)
        data.withUnsafeBytes { bytes in
            var start = 0
            while start < byPath.count {
                var end = start + 1
                while end < byPath.count, Self.compare(bytes, parsed[byPath[start]].path, parsed[byPath[end]].path) == 0 { end += 1 }
                records[byPath[start]].content = parsed[byPath[end - 1]].content
                for later in byPath[(start + 1)..<end] { kept[later] = false }
                order.append(byPath[start])
                start = end
            }
        }
        // Positions in `records` once the repeated ones are dropped.
        var newPosition = [Int](repeating: -1, count: parsed.count)
        var next = 0
        for position in parsed.indices where kept[position] {
            newPosition[position] = next
            next += 1
        }
        self.records = records.indices.filter { kept[$0] }.map { records[$0] }
        keyOrder = order.map { newPosition[$0] }
        mapping?.letGo()
    }

    /// The record at `position` as an entry: its key, its path as shown, and its content (a slice of the stream).
    func entry(at position: Int) -> ImportSource.Entry {
        let record = records[position]
        let path = Array(data[record.path])
        return ImportSource.Entry(
            key: DocumentKey(checked: keyPrefix + String(decoding: path, as: UTF8.self)), path: FileTree.display(path),
            content: .bytes(data[record.content]))
    }

    /// Stream bytes read between lettings go of a mapped stream's pages.
    static let readBetweenLettingGo = 1 << 24

    /// The key and content of the records at `positions`, in their order; the contents of a mapped stream copied out
    /// into one buffer that they are slices of (a `Data` of its own each cost a batch of 131,072 documents 21 MB).
    /// `progress` hears (records read, records in all) counted from `positions`' start, of `total`.
    ///
    /// Read in the stream's order (positions follow it), whatever order
    /// `positions` is in: a batch in key order reads records from all over
    /// the file, and each page read would map its neighbours in for nothing.
    /// A mapped stream's pages are let go every `readBetweenLettingGo` bytes.
    func contents(at positions: ArraySlice<Int>, progress: (@Sendable (Int, Int) -> Void)?, total: Int) -> [(key: DocumentKey, content: Data)] {
        let positions = Array(positions)
        var keys = [DocumentKey?](repeating: nil, count: positions.count)
        var contents = [Range<Int>](repeating: 0..<0, count: positions.count)
        var copied = Data()
        if mapping != nil { copied.reserveCapacity(positions.reduce(0) { $0 + records[$1].content.count }) }
        var lastLetGo = 0
        for (done, slot) in positions.indices.sorted(by: { positions[$0] < positions[$1] }).enumerated() {
            if done % 256 == 0 { progress?(done, total) }
            let record = records[positions[slot]]
            keys[slot] = DocumentKey(checked: keyPrefix + String(decoding: data[record.path], as: UTF8.self))
            guard let mapping else {
                contents[slot] = record.content
                continue
            }
            if record.content.lowerBound - lastLetGo >= Self.readBetweenLettingGo {
                mapping.letGo()
                lastLetGo = record.content.lowerBound
            }
            contents[slot] = copied.count..<copied.count + record.content.count
            copied.append(data[record.content])
        }
        mapping?.letGo()
        let source = mapping == nil ? data : copied
        return positions.indices.map { slot in (keys[slot]!, source[contents[slot]]) }
    }

    private static func compare(_ bytes: UnsafeRawBufferPointer, _ left: Range<Int>, _ right: Range<Int>) -> Int {
        let common = min(left.count, right.count)
        let order = common == 0 ? 0 : memcmp(bytes.baseAddress! + left.lowerBound, bytes.baseAddress! + right.lowerBound, common)
        return order != 0 ? Int(order) : left.count - right.count
    }
}
