import Foundation

/// The fields a `Decodable` type reads, as JSON Pointer steps (`*` for every element of an array, or every key of a
/// dictionary): what a typed document's rules may name.
///
/// Found without a value of the type: it is decoded once from a decoder
/// that answers every request with a placeholder and notes each key asked
/// for. An optional is followed as if present; an enum is read as its first
/// case when it is `CaseIterable`, and a type that cannot be read so is an
/// error that says which.
enum EncodedFields {
    static func of<T: Decodable>(_ type: T.Type) throws(TruceError) -> Set<[String]> {
        let recorder = FieldRecorder()
        do { _ = try recorder.value(T.self, at: []) } catch {
            throw .invalidConfiguration("\(T.self)'s fields cannot be found to check its rules: \(error)")
        }
        return recorder.paths
    }
}

/// The paths a decode asked for.
final class FieldRecorder {
    var paths: Set<[String]> = []
    /// Types being read, by name: a recursive type is not followed into itself.
    private var reading: [String] = []

    func value<T: Decodable>(_ type: T.Type, at path: [String]) throws -> T {
        paths.insert(path)
        if let placeholder = Self.placeholder(T.self) { return placeholder }
        if let first = Self.firstCase(T.self) { return first }
        let name = String(reflecting: T.self)
        // A type that holds itself (a tree): its fields are known from the outer reading; inside, nothing is there.
        if reading.filter({ $0 == name }).count >= 2 { return try T(from: EmptyDecoder()) }
        reading.append(name)
        defer { reading.removeLast() }
        return try T(from: RecordingDecoder(recorder: self, path: path))
    }

    static func placeholder<T>(_ type: T.Type) -> T? {
        let values: [Any] = [
            "", false, 0 as Int, 0 as Int8, 0 as Int16, 0 as Int32, 0 as Int64, 0 as UInt, 0 as UInt8, 0 as UInt16, 0 as UInt32,
            0 as UInt64, 0 as Double, 0 as Float, Decimal(0), Date(timeIntervalSince1970: 0), Data(), UUID(), URL(fileURLWithPath: "/"),
        ]
        return values.lazy.compactMap { $0 as? T }.first
    }

    private static func firstCase<T>(_ type: T.Type) -> T? {
        func first<C: CaseIterable>(_ type: C.Type) -> Any? { C.allCases.first }
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        return first(iterable) as? T
    }
}

/// A decoder with nothing in it: no keys, no elements, every optional nil; what a recursive type reads inside itself.
private struct EmptyDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { KeyedDecodingContainer(Keyed<Key>()) }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single() }

    static func value<T: Decodable>(_ type: T.Type) throws -> T { try FieldRecorder.placeholder(T.self) ?? T(from: EmptyDecoder()) }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { false }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try EmptyDecoder.value(T.self) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>())
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Unkeyed() }
        func superDecoder() throws -> any Decoder { EmptyDecoder() }
        func superDecoder(forKey key: Key) throws -> any Decoder { EmptyDecoder() }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try EmptyDecoder.value(T.self) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>())
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed() }
        mutating func superDecoder() throws -> any Decoder { EmptyDecoder() }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try EmptyDecoder.value(T.self) }
    }
}

private struct RecordingDecoder: Decoder {
    let recorder: FieldRecorder
    let path: [String]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RecordingKeyed<Key>(recorder: recorder, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { RecordingUnkeyed(recorder: recorder, path: path + ["*"]) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { RecordingSingle(recorder: recorder, path: path) }
}

private struct RecordingKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: FieldRecorder
    let path: [String]
    var codingPath: [any CodingKey] { [] }
    /// A dictionary's keys: one, `*`, standing for all of them; a type's own keys are asked for by name instead.
    var allKeys: [Key] { [Key(stringValue: "*")].compactMap { $0 } }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try recorder.value(T.self, at: path + [key.stringValue]) }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        recorder.paths.insert(path + [key.stringValue])
        return KeyedDecodingContainer(RecordingKeyed<NestedKey>(recorder: recorder, path: path + [key.stringValue]))
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        recorder.paths.insert(path + [key.stringValue])
        return RecordingUnkeyed(recorder: recorder, path: path + [key.stringValue, "*"])
    }
    func superDecoder() throws -> any Decoder { RecordingDecoder(recorder: recorder, path: path) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RecordingDecoder(recorder: recorder, path: path + [key.stringValue]) }
}

private struct RecordingUnkeyed: UnkeyedDecodingContainer {
    let recorder: FieldRecorder
    /// The path of its elements, ending in `*`.
    let path: [String]
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex >= 1 }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        return try recorder.value(T.self, at: path)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        currentIndex += 1
        recorder.paths.insert(path)
        return KeyedDecodingContainer(RecordingKeyed<NestedKey>(recorder: recorder, path: path))
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        recorder.paths.insert(path)
        return RecordingUnkeyed(recorder: recorder, path: path + ["*"])
    }
    mutating func superDecoder() throws -> any Decoder { RecordingDecoder(recorder: recorder, path: path) }
}

private struct RecordingSingle: SingleValueDecodingContainer {
    let recorder: FieldRecorder
    let path: [String]
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try recorder.value(T.self, at: path) }
}
