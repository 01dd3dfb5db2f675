import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The scratch repositories pushes killed while pushing leave in the temporary directory go, once their process is
/// gone and they are a day old; nothing else there does.
@Suite(.timeLimit(.minutes(10))) struct OutgoingLeftoversTests {
    /// A process id that no process has now: a shell's, once it has exited.
    static func deadProcessID() throws -> Int32 {
        let shell = try run("/bin/sh", ["-c", "echo $$"])
        return try #require(Int32(shell.output.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Makes `name` in `directory` as a scratch repository would be (a folder with a file), last changed `age` ago.
    static func leftover(_ name: String, in directory: String, age: TimeInterval) throws -> String {
        let path = directory + name
        try FileManager.default.createDirectory(atPath: path + "/objects", withIntermediateDirectories: true)
        try Data("ref: refs/heads/main\n".utf8).write(to: URL(fileURLWithPath: path + "/HEAD"))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: path)
        return path
    }

    @Test func onlyTheOldOnesOfProcessesGoneAreRemoved() throws {
        let temporary = TemporaryDirectory("truce-leftovers")
        let directory = temporary.path + "/"
        let dead = try Self.deadProcessID(), twoDays: TimeInterval = 2 * 86_400
        let stale = try Self.leftover("tmp_truce_outgoing_\(dead)_A", in: directory, age: twoDays)
        let young = try Self.leftover("tmp_truce_outgoing_\(dead)_B", in: directory, age: 60)
        let running = try Self.leftover("tmp_truce_outgoing_\(getppid())_C", in: directory, age: twoDays)
        let ours = try Self.leftover("tmp_truce_outgoing_\(getpid())_D", in: directory, age: twoDays)
        let incoming = try Self.leftover("tmp_truce_incoming_\(dead)_E", in: directory, age: twoDays)
        let unnamed = try Self.leftover("tmp_truce_outgoing_x_F", in: directory, age: twoDays)

        OutgoingLeftovers.removeStale(in: directory)
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        #expect(!exists(stale))
        #expect(exists(young) && exists(running) && exists(ours) && exists(incoming) && exists(unnamed))
    }

    /// A push's scratch repository made now clears the stale ones of the system's temporary directory.
    @Test func anOutgoingQuarantineClearsTheStaleOnes() throws {
        let store = try PackWriterTests.Fixture()
        let name = "tmp_truce_outgoing_\(try Self.deadProcessID())_\(UUID().uuidString)"
        let stale = try Self.leftover(name, in: NSTemporaryDirectory(), age: 2 * 86_400)
        let quarantine = try Quarantine(of: try Repository.openBare(at: store.path), outgoing: true)
        #expect(!FileManager.default.fileExists(atPath: stale))
        withExtendedLifetime(quarantine) {}
    }
}
