import Foundation
import TestSupport
import Testing

/// `truce init` where a store's creation marker lies beside files of the user's: no interrupted creation to finish.
@Suite(.timeLimit(.minutes(10))) struct InitCommandTests {
    /// `init` there is refused with one line and exit 2, a command that opens the store is refused without advising
    /// `init`, and every file of the user's stays byte for byte.
    @Test(arguments: CreationMarkedDirectory.allCases)
    func initBesideTheUsersFilesIsRefusedAndTheyStay(_ kind: CreationMarkedDirectory) throws {
        let directory = TemporaryDirectory("truce-marked")
        // A directory for each command, so that each is seen to refuse it on its own.
        func marked(_ name: String) throws -> (path: String, before: [String: Data?]) {
            try kind.make(at: directory.file(name))
            return (directory.file(name), try snapshot(ofDirectory: directory.file(name)))
        }

        let initialized = try marked("initialized")
        let initResult = try truce(["init"], store: initialized.path)
        #expect(initResult.status == 2, "\(initResult.errorOutput)")
        #expect(initResult.errorLines == ["truce: \(initialized.path) already exists; a store is created only in a new or empty directory"])
        #expect(try snapshot(ofDirectory: initialized.path) == initialized.before, "init changed the directory")

        let opened = try marked("opened")
        let status = try truce(["status"], store: opened.path)
        #expect(status.status != 0 && status.errorLines.count == 1, "\(status.errorOutput)")
        #expect(status.errorOutput.contains("is not a Truce store"), "\(status.errorOutput)")
        #expect(!status.errorOutput.contains("truce init"), "advises an init that would remove the user's files: \(status.errorOutput)")
        #expect(try snapshot(ofDirectory: opened.path) == opened.before, "status changed the directory")
    }
}
