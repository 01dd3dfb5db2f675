import Foundation

/// Checks that a resolver's output is still a document of its kind before anything is written.
///
/// A merge of two valid JSON files can be invalid JSON; writing it would turn a
/// conflict into a broken document. The kind comes from the key's extension.
enum OutputValidation {
    /// Why `content` is not a valid document for `key`, nil when it is (or when its kind is not checked).
    static func problem(with content: Data, for key: DocumentKey) -> String? {
        switch key.fileExtension {
        case "json":
            return jsonProblem(content)
        case "jsonl", "ndjson":
            for (index, line) in content.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
            where !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) {
                if jsonProblem(Data(line)) != nil { return "not valid JSON Lines: line \(index + 1) does not parse" }
            }
            return nil
        case "plist":
            do {
                _ = try PropertyListSerialization.propertyList(from: content, options: [], format: nil)
                return nil
            } catch {
                return "not a property list"
            }
        default:
            return nil
        }
    }

    private static func jsonProblem(_ data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            return "not valid JSON"
        }
    }
}
