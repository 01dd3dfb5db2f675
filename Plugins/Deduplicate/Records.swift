import Foundation
import TruceCore

/// One record: a JSON object, and its canonical text (keys sorted) that identifies it exactly.
struct Record {
    let fields: [String: Any]
    let canonical: String

    init(_ fields: [String: Any]) throws {
        self.fields = fields
        canonical = String(
            decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]),
            as: UTF8.self)
    }

    /// The canonical JSON text of any value (a fragment: `"x"`, `12`, `true`).
    static func canonical(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes]) else { return "" }
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}

/// The records of one head, read from a JSON array or JSON Lines, and how to write records back the same way.
struct RecordCollection {
    let records: [Record]
    private let lines: Bool
    private let pretty: Bool
    private let trailingNewline: Bool

    /// Reads `side`; content that is not a collection of JSON objects is a malformed-content error naming the version.
    init(_ side: ConflictSet.Side, key: DocumentKey) throws(TruceError) {
        let data = side.content ?? Data()
        func malformed(_ reason: String) -> TruceError { .malformedContent(key, version: side.version.id, reason: reason) }
        lines = ["jsonl", "ndjson"].contains(key.fileExtension)
        trailingNewline = data.last == 0x0A
        pretty = !lines && data.drop { $0 == 0x20 || $0 == 0x0A }.reversed().drop { $0 == 0x20 || $0 == 0x0A }.contains(0x0A)
        var objects: [[String: Any]] = []
        if lines {
            for (index, line) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated()
            where !line.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) {
                let object: Any
                do { object = try JSONSerialization.jsonObject(with: Data(line)) } catch {
                    throw malformed("is not valid JSON Lines: line \(index + 1) does not parse")
                }
                guard let fields = object as? [String: Any] else {
                    throw malformed("is not a collection of records: line \(index + 1) is not a JSON object")
                }
                objects.append(fields)
            }
        } else {
            let top: Any
            do { top = try JSONSerialization.jsonObject(with: data) } catch { throw malformed("is not valid JSON") }
            guard let array = top as? [Any] else { throw malformed("is not a collection of records: it is not a JSON array") }
            for (index, element) in array.enumerated() {
                guard let fields = element as? [String: Any] else {
                    throw malformed("is not a collection of records: element \(index + 1) is not a JSON object")
                }
                objects.append(fields)
            }
        }
        do { records = try objects.map(Record.init) } catch {
            throw malformed("holds a record that cannot be written back as JSON")
        }
    }

    /// `records` as this collection was written: one compact object per line, or an array (indented when it was).
    func serialized(_ records: [Record]) throws -> Data {
        if lines { return Data(records.map { $0.canonical + "\n" }.joined().utf8) }
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        var data = try JSONSerialization.data(withJSONObject: records.map(\.fields), options: options)
        if trailingNewline { data.append(0x0A) }
        return data
    }
}

/// A field's value, ordered for `keep` rules: missing < null < false < true < numbers < strings < anything else.
enum FieldValue: Comparable {
    case missing
    case null
    case `false`
    case `true`
    case number(Double)
    case string(String)
    case other(String)

    init(_ value: Any?) {
        guard let value else {
            self = .missing
            return
        }
        if value is NSNull {
            self = .null
            return
        }
        if let text = value as? String {
            self = .string(text)
            return
        }
        // The canonical text tells a JSON boolean from a number, which Foundation stores alike.
        switch Record.canonical(value) {
        case "true": self = .true
        case "false": self = .false
        case let text: self = (value as? NSNumber).map { .number($0.doubleValue) } ?? .other(text)
        }
    }
}
