import Foundation
import Testing

/// A directory under the system's temporary one, removed with the value.
final class Scratch: Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("adopter-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func join(_ name: String) -> String { path + "/" + name }
}

/// Runs `git` with `arguments` and returns what it printed; a failing git fails the test.
@discardableResult
func git(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["git"] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "git \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
    return String(decoding: data, as: UTF8.self)
}

/// Collects what a watcher hands over, from any thread.
final class Inbox<Item: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Item] = []

    func put(_ item: Item) { lock.withLock { items.append(item) } }

    var all: [Item] { lock.withLock { items } }

    /// Waits up to `seconds` for an item that satisfies `condition`.
    func first(within seconds: Double = 10, where condition: (Item) -> Bool) async throws -> Item? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let found = all.first(where: condition) { return found }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return all.first(where: condition)
    }
}
