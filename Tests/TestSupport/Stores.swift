import Foundation
import Truce

/// A fresh store in its own temporary directory; the directory goes when the value does.
public final class TestStore: Sendable {
    public let directory = TemporaryDirectory("truce-store")
    public let store: DocumentStore
    public var path: String { store.path }

    /// A fresh store; with `saveLog`, one whose saves go through its save log; its syncs use `syncEnvironment`.
    public init(saveLog: Bool = false, syncEnvironment: SyncEnvironment = .empty) throws {
        store = try DocumentStore(
            directory: URL(fileURLWithPath: directory.file("store")), mode: .createNew, saveLog: saveLog, syncEnvironment: syncEnvironment)
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

/// Every path under `path`, folders too (with nil), and each file's bytes: equal only when nothing under it changed.
public func snapshot(ofDirectory path: String) throws -> [String: Data?] {
    var found: [String: Data?] = [:]
    for relative in try FileManager.default.subpathsOfDirectory(atPath: path) {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDirectory)
        found[relative] = isDirectory.boolValue ? .some(nil) : try Data(contentsOf: URL(fileURLWithPath: path + "/" + relative))
    }
    return found
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

/// The date an ISO 8601 text with a zone names (`2026-11-30T10:00:00Z`), for terse test dates; nil when it names none.
public func isoDate(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.date(from: text)
}

/// A directory holding a store creation's marker (`truce-creating`) beside something of the user's: what no creation
/// leaves, so what no creation may take for its own leftovers and remove.
public enum CreationMarkedDirectory: String, CaseIterable, Sendable {
    /// The marker among the user's files and folders, nothing of git.
    case userFiles
    /// What an interrupted creation leaves (a bare repository without `truce.version`, the marker), and a file of the user's.
    case halfMadeStoreAndAUserFile

    /// Makes this directory at `path`.
    public func make(at path: String) throws {
        let manager = FileManager.default
        switch self {
        case .userFiles:
            try manager.createDirectory(atPath: path + "/photos/2026", withIntermediateDirectories: true)
            try manager.createDirectory(atPath: path + "/empty folder", withIntermediateDirectories: true)
            try Data.text("my notes\n").write(to: URL(fileURLWithPath: path + "/notes.txt"))
            var random = SeededRandom(seed: 7)
            try Data((0..<20_000).map { _ in UInt8(truncatingIfNeeded: random.next()) })
                .write(to: URL(fileURLWithPath: path + "/photos/2026/beach.jpg"))
        case .halfMadeStoreAndAUserFile:
            let made = try git(["init", "-q", "--bare", path])
            guard made.status == 0 else { throw GitCommandFailed(arguments: ["init", "--bare", path], stderr: made.errorOutput) }
            try Data.text("# Thesis\n\nchapter one\n").write(to: URL(fileURLWithPath: path + "/thesis.md"))
        }
        try Data().write(to: URL(fileURLWithPath: path + "/truce-creating"))
    }
}
