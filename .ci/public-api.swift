// Keeps of a swift-api-digester dump (-dump-sdk) the declarations an adopter can use: it drops those the dump marks
// "isInternal" (`package`, and `internal` ones that are @usableFromInline), which the digester compares too, so that
// .ci/api-check reports breaks of the public API only. Usage: public-api DUMP.json OUT.json
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: public-api DUMP.json OUT.json\n".utf8))
    exit(2)
}

/// `value` without the declarations marked internal, at any depth (the dump nests them under "ABIRoot", "children").
func publicOnly(_ value: Any) -> Any {
    if let object = value as? [String: Any] { return object.mapValues(publicOnly) }
    guard let array = value as? [Any] else { return value }
    return array.filter { (($0 as? [String: Any])?["isInternal"] as? Bool) != true }.map(publicOnly)
}

do {
    let dump = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: arguments[1])))
    let kept = try JSONSerialization.data(withJSONObject: publicOnly(dump), options: [.prettyPrinted, .sortedKeys])
    try kept.write(to: URL(fileURLWithPath: arguments[2]))
} catch {
    FileHandle.standardError.write(Data("public-api: \(arguments[1]): \(error)\n".utf8))
    exit(1)
}
