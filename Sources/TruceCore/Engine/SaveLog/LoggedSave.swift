import Foundation
internal import TruceGit

/// One save as the save log holds it: every object it wrote, the head it publishes and the change it journals.
///
/// Everything a checkpoint needs to land the save in git as the
/// transaction would have, from the log alone: a process killed after its
/// save returned leaves the record, and whichever process opens the store
/// next applies it.
struct LoggedSave {
    /// The process's log reader that wrote it (`SaveLogOverlay.origin`): it adopted the save when queueing it.
    let origin: UInt64
    let objects: [RawObject]
    let head: PendingHead
    let change: Change

    /// The record's format; a record of another format stops the checkpoint instead of being guessed at.
    static let format: UInt8 = 2

    /// The record's bytes: fields in a fixed order, each variable one after its length (little-endian 32 bits).
    var encoded: [UInt8] {
        var bytes: [UInt8] = [Self.format]
        bytes.appendField(origin)
        bytes.appendField(UInt32(objects.count))
        for object in objects {
            bytes.append(object.type)
            bytes.appendBytes(object.bytes)
        }
        bytes.appendBytes(Array(head.key.rawValue.utf8))
        bytes += head.id.objectID.bytes
        bytes.appendField(UInt32(head.replacing.count))
        for replaced in head.replacing { bytes += replaced.objectID.bytes }
        bytes.appendBytes(Array(head.message.utf8))
        bytes.appendBytes(Array(change.kind.rawValue.utf8))
        bytes.appendBytes(Array(change.author.utf8))
        bytes.appendField(change.date.timeIntervalSince1970.bitPattern)
        return bytes
    }

    init(origin: UInt64, objects: [RawObject], head: PendingHead, change: Change) {
        (self.origin, self.objects, self.head, self.change) = (origin, objects, head, change)
    }

    /// The origin of an encoded record, read without decoding the rest; nil when it is not one of this format.
    static func origin(of bytes: [UInt8]) -> UInt64? {
        var reader = FieldReader(bytes: bytes.prefix(9))
        guard reader.byte() == format else { return nil }
        return reader.field(UInt64.self)
    }

    /// Decodes a record `encoded` wrote; nil when the bytes are not one (another format, or damage the log's
    /// checksums missed).
    init?(decoding bytes: [UInt8]) {
        var reader = FieldReader(bytes: bytes[...])
        guard reader.byte() == Self.format, let origin = reader.field(UInt64.self), let count = reader.field(UInt32.self) else { return nil }
        var objects: [RawObject] = []
        for _ in 0..<count {
            guard let type = reader.byte(), let body = reader.bytes() else { return nil }
            objects.append(RawObject(type: type, bytes: Array(body)))
        }
        guard let keyBytes = reader.bytes(), let key = DocumentKey(stored: String(decoding: keyBytes, as: UTF8.self)),
            let id = reader.objectID(), let replacedCount = reader.field(UInt32.self)
        else { return nil }
        var replacing: [VersionID] = []
        for _ in 0..<replacedCount {
            guard let replaced = reader.objectID() else { return nil }
            replacing.append(VersionID(replaced))
        }
        guard let message = reader.bytes(), let kindBytes = reader.bytes(),
            let kind = Change.Kind(rawValue: String(decoding: kindBytes, as: UTF8.self)), let author = reader.bytes(),
            let date = reader.field(UInt64.self), reader.isAtEnd
        else { return nil }
        let version = VersionID(id)
        self.origin = origin
        self.objects = objects
        head = PendingHead(key: key, id: version, replacing: replacing, message: String(decoding: message, as: UTF8.self))
        change = Change(
            kind: kind, key: key, version: version, author: String(decoding: author, as: UTF8.self),
            date: Date(timeIntervalSince1970: Double(bitPattern: date)))
    }
}

extension [UInt8] {
    fileprivate mutating func appendField<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func appendBytes(_ bytes: [UInt8]) {
        appendField(UInt32(bytes.count))
        append(contentsOf: bytes)
    }
}

/// Reads `LoggedSave.encoded`'s fields in order; each read is nil past the end.
private struct FieldReader {
    var rest: ArraySlice<UInt8>

    init(bytes: ArraySlice<UInt8>) { rest = bytes }

    var isAtEnd: Bool { rest.isEmpty }

    mutating func byte() -> UInt8? { rest.popFirst() }

    mutating func field<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard rest.count >= size else { return nil }
        var value: T = 0
        for (shift, byte) in rest.prefix(size).enumerated() { value |= T(byte) << (8 * shift) }
        rest.removeFirst(size)
        return value
    }

    mutating func bytes() -> ArraySlice<UInt8>? {
        guard let count = field(UInt32.self), rest.count >= Int(count) else { return nil }
        defer { rest.removeFirst(Int(count)) }
        return rest.prefix(Int(count))
    }

    mutating func objectID() -> ObjectID? {
        guard rest.count >= 20 else { return nil }
        defer { rest.removeFirst(20) }
        return ObjectID(bytes: rest.prefix(20))
    }
}
