import Foundation
import Truce

/// A directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "truce-test") {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `data` to a file inside the directory and returns its path.
    @discardableResult
    public func write(_ data: Data, to name: String) -> String {
        let target = file(name)
        try! data.write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Creates an empty file whose name is exactly `name`'s bytes, which need not be UTF-8 (a String path could not say them).
    public func createEmptyFile(named name: [UInt8]) {
        let bytes = Array(path.utf8) + [0x2F] + name + [0]
        let descriptor = bytes.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) } }
        precondition(descriptor >= 0, "cannot create a file named \(name) in \(path)")
        close(descriptor)
    }
}

/// A fresh store in its own temporary directory; the directory goes when the value does.
public final class TestStore: Sendable {
    public let directory = TemporaryDirectory("truce-store")
    public let store: DocumentStore
    public var path: String { store.path }

    /// A fresh store; with `saveLog`, one whose saves go through its save log.
    public init(saveLog: Bool = false) throws {
        store = try DocumentStore.create(at: directory.file("store"), saveLog: saveLog)
    }

    /// Runs `git -C <store> …` and returns its stdout, failing the caller when git fails.
    public func git(_ arguments: String...) throws -> String {
        let result = try TestSupport.git(["-C", path] + arguments)
        guard result.status == 0 else { throw GitCommandFailed(arguments: arguments, stderr: result.errorOutput) }
        return result.output
    }
}

public struct GitCommandFailed: Error, CustomStringConvertible {
    public let arguments: [String]
    public let stderr: String
    public var description: String { "git \(arguments.joined(separator: " ")) failed: \(stderr)" }
}

/// Every file of a store and its bytes: two snapshots are equal only when nothing in the store changed.
public func snapshot(ofStore path: String) -> [String: Data] {
    var files: [String: Data] = [:]
    guard let enumerator = FileManager.default.enumerator(atPath: path) else { return files }
    while let relative = enumerator.nextObject() as? String {
        let full = path + "/" + relative
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
            files[relative] = FileManager.default.contents(atPath: full) ?? Data()
        }
    }
    return files
}

extension Data {
    /// UTF-8 bytes of `text`, for terse test content.
    public static func text(_ text: String) -> Data { Data(text.utf8) }

    /// The bytes as a one-line Swift-like string literal, for failure messages.
    public var escaped: String { String(decoding: self, as: UTF8.self).debugDescription }
}

/// Writes a merge's three inputs as `base`, `ours` and `theirs` in `directory`, creating it.
public func writeMergeInputs(base: Data, ours: Data, theirs: Data, to directory: String) throws {
    let url = URL(fileURLWithPath: directory)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    try base.write(to: url.appendingPathComponent("base"))
    try ours.write(to: url.appendingPathComponent("ours"))
    try theirs.write(to: url.appendingPathComponent("theirs"))
}

/// Turns every pack of the store at `path` into loose objects, with git's own `unpack-objects`: the store as git
/// (or a Truce that wrote loose objects) would have left it, for tests of what damage to a loose object does.
public func unpackObjects(inStore path: String) throws {
    let packDirectory = path + "/objects/pack/"
    let aside = TemporaryDirectory("truce-unpack")
    for name in try FileManager.default.contentsOfDirectory(atPath: packDirectory) where name.hasPrefix("pack-") {
        try FileManager.default.moveItem(atPath: packDirectory + name, toPath: aside.file(name))
    }
    for name in try FileManager.default.contentsOfDirectory(atPath: aside.path) where name.hasSuffix(".pack") {
        let result = try git(["-C", path, "unpack-objects", "-q"], input: Data(contentsOf: URL(fileURLWithPath: aside.file(name))))
        guard result.status == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: aside.file(name)]) }
    }
}
