import Foundation

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
