import Foundation

/// A bare repository (`git init --bare`) in a temporary directory of its own, removed with it when the value is
/// released: a hub for a test. Hold the value for as long as the hub is used; a path taken from a temporary
/// `TemporaryDirectory` outlives its directory, and `git init` then makes one that nothing removes.
public final class BareRepository: Sendable {
    public let directory: TemporaryDirectory
    public let path: String

    public init(_ label: String = "truce-hub") throws {
        directory = TemporaryDirectory(label)
        path = directory.file("hub.git")
        let made = try git(["init", "-q", "--bare", path])
        guard made.status == 0 else { throw ChildProcessError("git init --bare \(path) failed: \(made.errorOutput)") }
    }
}
