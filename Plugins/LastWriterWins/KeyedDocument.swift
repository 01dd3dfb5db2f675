import Foundation
import TruceCore

/// A document that is a dictionary: a JSON object or a property-list dictionary, with what it takes to write one back.
struct KeyedDocument {
    /// The two kinds of dictionary documents.
    enum Kind {
        case json
        case propertyList
    }

    let entries: [String: Any]
    /// How the document was written: JSON with or without indentation, or a property list as XML or binary.
    let layout: Layout

    enum Layout: Equatable {
        case json(pretty: Bool, trailingNewline: Bool)
        case propertyList(PropertyListSerialization.PropertyListFormat)
    }

    /// The kind a key's documents are: `.json` and `.plist` by extension, else by what `sample` starts with.
    static func kind(of key: DocumentKey, sample: Data) -> Kind {
        switch key.fileExtension {
        case "json": return .json
        case "plist": return .propertyList
        default:
            let first = sample.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            return sample.starts(with: Data("bplist".utf8)) || first == UInt8(ascii: "<") ? .propertyList : .json
        }
    }

    /// Reads `side` as a dictionary of `kind`; anything else is a malformed-content error naming the version.
    init(_ side: ConflictSet.Side, kind: Kind, key: DocumentKey) throws(TruceError) {
        let data = side.content ?? Data()
        func malformed(_ reason: String) -> TruceError { .malformedContent(key, version: side.version.id, reason: reason) }
        switch kind {
        case .json:
            let object: Any
            do { object = try JSONSerialization.jsonObject(with: data) } catch { throw malformed("is not valid JSON" + Self.detail(error)) }
            guard let entries = object as? [String: Any] else { throw malformed("is JSON but not an object, so it has no keys to merge") }
            let text = data.drop { $0 == 0x20 || $0 == 0x0A }.reversed().drop { $0 == 0x20 || $0 == 0x0A }
            self.entries = entries
            layout = .json(pretty: text.contains(0x0A), trailingNewline: data.last == 0x0A)
        case .propertyList:
            var format = PropertyListSerialization.PropertyListFormat.xml
            let object: Any
            do { object = try PropertyListSerialization.propertyList(from: data, options: [], format: &format) } catch {
                throw malformed("is not a valid property list" + Self.detail(error))
            }
            guard let entries = object as? [String: Any] else {
                throw malformed("is a property list but not a dictionary, so it has no keys to merge")
            }
            self.entries = entries
            layout = .propertyList(format == .binary ? .binary : .xml)
        }
    }

    /// `entries` written the way this document was: sorted keys for JSON, the same property-list format.
    func serialized(_ entries: [String: Any]) throws -> Data {
        switch layout {
        case .json(let pretty, let trailingNewline):
            var data = try JSONSerialization.data(
                withJSONObject: entries,
                options: pretty
                    ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
                    : [.sortedKeys, .withoutEscapingSlashes])
            if trailingNewline { data.append(0x0A) }
            return data
        case .propertyList(let format):
            return try PropertyListSerialization.data(fromPropertyList: entries, format: format, options: 0)
        }
    }

    /// Bytes that are equal exactly when two values of this kind are equal (dictionaries compared with sorted keys).
    static func canonical(_ value: Any?, kind: Kind) -> Data? {
        guard let value else { return nil }
        switch kind {
        case .json: return try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
        // XML property lists list dictionary keys sorted, so equal values give equal bytes.
        case .propertyList: return try? PropertyListSerialization.data(fromPropertyList: [value], format: .xml, options: 0)
        }
    }

    /// A value as people read it in a decision: compact JSON with sorted keys (`"dark"`, `{"a":1}`), or for a
    /// property-list value JSON cannot hold (data, a date), its XML; nil when there is no value.
    static func text(of value: Any?, kind: Kind) -> Data? {
        guard let value else { return nil }
        if JSONSerialization.isValidJSONObject([value]),
            let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes])
        {
            return Data(data.dropFirst().dropLast())
        }
        return try? PropertyListSerialization.data(fromPropertyList: value, format: .xml, options: 0)
    }

    /// The parser's own words, when it gave any, after a colon.
    private static func detail(_ error: Error) -> String {
        guard let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String, !text.isEmpty else { return "" }
        return ": " + text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
