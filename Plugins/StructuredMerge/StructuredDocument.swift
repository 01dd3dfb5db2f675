import Foundation

/// A JSON or property-list document read into a value tree, with how to write a tree back in its format.
struct StructuredDocument: Sendable {
    /// What a document is written as.
    enum Format: Equatable, Sendable {
        case json(JSONLayout)
        case propertyList(binary: Bool)
    }

    /// Which kind of document a file is.
    enum Kind: Sendable {
        case json
        case propertyList
    }

    let root: StructuredValue
    let format: Format

    /// `.json` and `.plist` by extension; otherwise a property list when `sample` starts like one (`bplist`, `<`).
    static func kind(ofPath path: String?, sample: Data) -> Kind {
        let fileExtension = path.flatMap { $0.split(separator: "/").last?.split(separator: ".", omittingEmptySubsequences: false).dropFirst().last }
        switch fileExtension?.lowercased() {
        case "json": return .json
        case "plist": return .propertyList
        default:
            let first = sample.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            return sample.starts(with: Data("bplist".utf8)) || first == UInt8(ascii: "<") ? .propertyList : .json
        }
    }

    /// Reads `data` as a document of `kind`; the error says why it cannot be merged by structure.
    static func read(_ data: Data, kind: Kind) throws(StructuredInputError) -> StructuredDocument {
        switch kind {
        case .json:
            let (root, layout) = try JSONParser.parse(data)
            return StructuredDocument(root: root, format: .json(layout))
        case .propertyList:
            var format = PropertyListSerialization.PropertyListFormat.xml
            let object: Any
            do {
                object = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
            } catch {
                throw StructuredInputError("is not a valid property list")
            }
            return StructuredDocument(root: try PropertyListValues.value(of: object, depth: 0), format: .propertyList(binary: format == .binary))
        }
    }

    /// This document, with the whitespace around its value (a final line break, or none) and its line ends taken
    /// from `other` where `other` changed them from the base and this document did not.
    func edges(following other: StructuredDocument, base: StructuredDocument) -> StructuredDocument {
        guard case .json(var layout) = format, case .json(let otherLayout) = other.format, case .json(let baseLayout) = base.format
        else { return self }
        func same(_ a: JSONLayout, _ b: JSONLayout) -> Bool {
            a.edges?.leading == b.edges?.leading && a.edges?.trailing == b.edges?.trailing && a.newline == b.newline
        }
        guard same(layout, baseLayout), !same(otherLayout, baseLayout) else { return self }
        (layout.edges, layout.trailingNewline, layout.newline) = (otherLayout.edges, otherLayout.trailingNewline, otherLayout.newline)
        return StructuredDocument(root: root, format: .json(layout))
    }

    /// `value` written in this document's format, then read back: output that does not parse is never returned.
    func written(_ value: StructuredValue, markers: JSONPrinter.Markers = JSONPrinter.Markers()) throws(StructuredInputError) -> Data {
        switch format {
        case .json(let layout):
            let data = JSONPrinter.document(value, layout: layout, markers: markers)
            do { _ = try JSONParser.parse(data) } catch {
                throw StructuredInputError("the merged JSON does not parse again (\(error)); nothing was written")
            }
            return data
        case .propertyList(let binary):
            let data: Data
            do {
                // Foundation's XML writer sorts keys; its binary writer does not, so binary has its own.
                data =
                    binary
                    ? try BinaryPropertyList.data(value)
                    : try PropertyListSerialization.data(fromPropertyList: try PropertyListValues.object(of: value), format: .xml, options: 0)
                _ = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch let error as StructuredInputError {
                throw error
            } catch {
                throw StructuredInputError("the merged property list does not parse again; nothing was written")
            }
            return data
        }
    }

    /// A value for people: JSON text in this document's layout (property-list dates and data as JSON strings).
    func text(of value: StructuredValue) -> Data {
        var layout = JSONLayout()
        if case .json(let own) = format { layout = own }
        layout.trailingNewline = true
        // The document's own whitespace around its value is not this value's.
        layout.edges = nil
        return JSONPrinter.document(value, layout: layout)
    }
}

/// Between Foundation's property-list objects and value trees, keeping integer, real, bool, date and data apart.
enum PropertyListValues {
    static func value(of object: Any, depth: Int) throws(StructuredInputError) -> StructuredValue {
        if depth >= JSONParser.maximumDepth {
            throw StructuredInputError("nests \(JSONParser.maximumDepth) levels deep or more, deeper than a structured merge reads")
        }
        switch object {
        case let dictionary as [String: Any]:
            // Property lists keep no member order; sorted keys give every replica the same order.
            var members: [ObjectValue.Member] = []
            for key in dictionary.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                members.append(ObjectValue.Member(key: key, value: try value(of: dictionary[key]!, depth: depth + 1)))
            }
            return .object(ObjectValue(members: members))
        case let array as [Any]:
            var elements: [StructuredValue] = []
            for element in array { elements.append(try value(of: element, depth: depth + 1)) }
            return .array(ArrayValue(elements: elements))
        case let string as String:
            return .string(string)
        case let date as Date:
            return .date(date)
        case let data as Data:
            return .data(data)
        case let flag as Bool where type(of: object) == Bool.self:
            return .bool(flag)
        case let number as NSNumber:
            let type = String(cString: number.objCType)
            if type == "d" || type == "f" { return .real(number.doubleValue) }
            if type == "c" || type == "B" { return .bool(number.boolValue) }
            return .number(number.stringValue)
        default:
            throw StructuredInputError("holds a property-list value of an unknown type")
        }
    }

    static func object(of value: StructuredValue) throws(StructuredInputError) -> Any {
        switch value {
        case .object(let object):
            var dictionary: [String: Any] = [:]
            for member in object.members { dictionary[member.key] = try self.object(of: member.value) }
            return dictionary
        case .array(let array):
            var elements: [Any] = []
            for element in array.elements { elements.append(try object(of: element)) }
            return elements
        case .string(let text, _): return text
        case .number(let text):
            if let integer = Int64(text) { return NSNumber(value: integer) }
            if let integer = UInt64(text) { return NSNumber(value: integer) }
            if let real = Double(text) { return NSNumber(value: real) }
            throw StructuredInputError("the number \(text) cannot be written in a property list")
        case .real(let number): return NSNumber(value: number)
        case .bool(let flag): return flag
        case .date(let date): return date
        case .data(let data): return data
        case .null: throw StructuredInputError("null cannot be written in a property list")
        case .unresolved: throw StructuredInputError("a conflict cannot be written in a property list")
        }
    }
}
