import Foundation
import TestSupport
import Testing
import Truce

/// Reading never needs to write: a store that can only be read reads as well as any, saves still in its save log
/// included, and a write there fails with one line (exit 3) and changes nothing.
///
/// Three ways a store can only be read, each real: a user who may read the
/// store but not write it, whose home directory cannot be read either (run
/// through `setpriv` as `nobody`); a read-only bind mount; a full tmpfs. The
/// store holds versions in git, a conflict, and two saves still in its save
/// log, copied while the process that logged them had not landed them. Each
/// read command must print what it prints on a writable copy of the same store.
@Suite(.timeLimit(.minutes(10)), .serialized, .enabled(if: geteuid() == 0, "mounting, and running as a second user, need root"))
struct ReadOnlyStoreTests {
    enum Confinement: String, CaseIterable, CustomTestStringConvertible {
        case otherUser = "another user, home unreadable"
        case readOnlyMount = "a read-only bind mount"
        case fullDisk = "a full tmpfs"
        var testDescription: String { rawValue }
    }

    /// A store with versions in git, `c.md` in conflict, and `in-log.md` and a new version of `in-git.md` in its log.
    struct Fixture {
        let directory = TemporaryDirectory("truce-read-only")
        let store: String
        /// The versions the save log holds, which git does not.
        let logged: [VersionID]

        init() throws {
            let source = directory.file("source")
            store = directory.file("store")
            for _ in 0..<3 {
                let writer = try DocumentStore.create(at: source + "-\(UUID().uuidString)", device: "laptop", saveLog: true)
                let path = writer.path
                try writer.save(Data("in git\n".utf8), to: "in-git.md")
                let base = try writer.save(Data("base\n".utf8), to: "c.md")
                try writer.save(Data("laptop's\n".utf8), to: "c.md", base: base.id)
                try writer.save(Data("phone's\n".utf8), to: "c.md", device: "phone", base: base.id)
                try writer.checkpoint()
                let logged = [
                    try writer.save(Data("only in the log\n".utf8), to: "in-log.md").id,
                    try writer.save(Data("in git, then the log\n".utf8), to: "in-git.md").id,
                ]
                // Copied while the writer holds them in its log: its checkpoint waits a second, so this almost always
                // wins; when it does not, the copy holds them in git and another round is made.
                _ = try? FileManager.default.removeItem(atPath: store)
                #expect(try run("/bin/cp", ["-a", path, store]).status == 0)
                withExtendedLifetime(writer) {}
                let inGit = try git(["-C", store, "rev-list", "--glob=refs/truce/heads/*"]).output
                if !logged.contains(where: { inGit.contains($0.hex) }) {
                    self.logged = logged
                    return
                }
            }
            throw ReliabilityFailure("the writer's checkpoint landed its log before every copy")
        }
    }

    /// The read commands, and what each reads of the fixture.
    static let reads: [[String]] = [
        ["status"], ["versions", "c.md"], ["cat", "in-log.md"], ["cat", "in-git.md"], ["log", "in-git.md"], ["explain", "c.md"],
        ["changes"], ["conflicts", "c.md"], ["review"], ["versions", "--json", "in-log.md"],
    ]

    /// Runs `truce` on `store`, as `nobody` with an unreadable home when `asOtherUser`.
    static func truce(_ arguments: [String], store: String, asOtherUser: Bool, home: String, input: Data = Data()) throws -> ProcessResult {
        guard asOtherUser else { return try TestSupport.truce(arguments, store: store, input: input) }
        return try run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", truceExecutable, "--store", store] + arguments,
            input: input, environment: ["HOME": home, "USER": "nobody"])
    }

    @Test(arguments: Confinement.allCases) func readsWorkAndWritesFailWithOneLineChangingNothing(_ confinement: Confinement) throws {
        let fixture = try Fixture()
        // What a writable copy prints: reading it writes nothing either, so it stays a copy of the same store.
        let reference = fixture.directory.file("reference")
        #expect(try run("/bin/cp", ["-a", fixture.store, reference]).status == 0)
        let expected = try Self.reads.map { try TestSupport.truce($0, store: reference) }
        for (command, result) in zip(Self.reads, expected) { #expect(result.status == 0, "\(command): \(result.errorOutput)") }
        #expect(expected[2].output == "only in the log\n" && expected[3].output == "in git, then the log\n")
        #expect(expected[0].output.contains("c.md") && expected[6].output.contains(fixture.logged[0].hex))

        let home = fixture.directory.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(chmod(home, 0) == 0)
        var confined = fixture.store
        var mount: Mount?
        var disk: FullDiskTests.FullDisk?
        switch confinement {
        case .otherUser:
            #expect(try run("/bin/chown", ["-R", "nobody:nogroup", confined]).status == 0)
            #expect(try run("/bin/chmod", ["-R", "a-w", confined]).status == 0)
        case .readOnlyMount:
            mount = try Mount(readOnly: fixture.store, at: fixture.directory.file("mounted"))
            confined = mount!.path
        case .fullDisk:
            disk = try FullDiskTests.FullDisk()
            confined = disk!.directory + "/store"
            #expect(try run("/bin/cp", ["-a", fixture.store, confined]).status == 0)
            try disk!.fill()
        }
        let asOtherUser = confinement == .otherUser
        let before = snapshot(ofStore: confined)
        for (command, reference) in zip(Self.reads, expected) {
            let result = try Self.truce(command, store: confined, asOtherUser: asOtherUser, home: home)
            #expect(result.status == 0 && result.errorOutput.isEmpty, "\(command) on \(confinement.rawValue): \(result.errorOutput)")
            #expect(result.output == reference.output, "\(command) on \(confinement.rawValue)")
        }
        // Export reads the store and writes elsewhere; a document in conflict is written as its current version and
        // named, exit 1 (a person is needed), as on any store.
        let exported = fixture.directory.file("exported-\(confinement)")
        try FileManager.default.createDirectory(atPath: exported, withIntermediateDirectories: true)
        _ = try run("/bin/chown", ["nobody:nogroup", exported])
        let export = try Self.truce(["export", exported, "--force"], store: confined, asOtherUser: asOtherUser, home: home)
        #expect(
            export.status == 1 && export.errorLines == ["truce: in conflict, written as its current version: c.md"], "export: \(export.errorOutput)")
        #expect(FileManager.default.contents(atPath: exported + "/in-log.md") == Data("only in the log\n".utf8))

        // A write fails with one line naming the store's failure, and changes nothing.
        let save = try Self.truce(["save", "new.md", "-"], store: confined, asOtherUser: asOtherUser, home: home, input: Data("new\n".utf8))
        #expect(save.status == 3, "save on \(confinement.rawValue): \(save.status) \(save.errorOutput)")
        #expect(save.errorLines.count == 1 && save.errorOutput.hasPrefix("truce: "), "\(save.errorOutput)")
        #expect(snapshot(ofStore: confined) == before, "reading and a refused write left the store as it was")

        // Nothing was lost: with the store writable again (room made), a write lands the logged saves beside its own.
        if let disk {
            try disk.makeRoom()
            #expect(try TestSupport.truce(["save", "new.md", "-"], store: confined, input: Data("new\n".utf8)).status == 0)
            let inGit = try git(["-C", confined, "rev-list", "--glob=refs/truce/heads/*"]).output
            #expect(fixture.logged.allSatisfy { inGit.contains($0.hex) })
            #expect(try TestSupport.truce(["cat", "in-log.md"], store: confined).output == "only in the log\n")
            let fsck = try git(["-C", confined, "fsck", "--strict", "--no-dangling"])
            #expect(fsck.status == 0 && fsck.output.isEmpty && fsck.errorOutput.isEmpty, "\(fsck.errorOutput)")
        }
        withExtendedLifetime(mount) {}
    }

    /// The library reads a read-only mount as the command line does: the saves in the log, the journal and the log's
    /// changes after it, the conflict.
    @Test func theLibraryReadsAReadOnlyMount() throws {
        let fixture = try Fixture()
        let mount = try Mount(readOnly: fixture.store, at: fixture.directory.file("mounted"))
        let store = try DocumentStore.open(at: mount.path)
        #expect(try store.contents(of: "in-log.md") == Data("only in the log\n".utf8))
        #expect(try store.currentVersion(of: "in-git.md")?.id == fixture.logged[1])
        #expect(try store.documents() == ["c.md", "in-git.md", "in-log.md"])
        #expect(try store.documentsInConflict().map(\.key) == ["c.md"])
        let changes = try store.changes()
        #expect(changes.changes.suffix(2).map(\.version) == fixture.logged)
        // The token names the logged saves: asked again, nothing new, however often.
        #expect(try store.changes(since: changes.token).changes.isEmpty)
        #expect(try store.history(of: "in-git.md").count == 2)
        #expect(throws: TruceError.self) { try store.save(Data("x\n".utf8), to: "x.md", device: "laptop") }
    }
}

/// A read-only bind mount of a directory, unmounted when released.
final class Mount {
    let path: String

    init(readOnly source: String, at path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let bound = try run("/usr/bin/mount", ["--bind", source, path])
        guard bound.status == 0 else { throw ReliabilityFailure("mount --bind: \(bound.errorOutput)") }
        let readOnly = try run("/usr/bin/mount", ["-o", "remount,ro,bind", path])
        guard readOnly.status == 0 else {
            _ = try? run("/usr/bin/umount", [path])
            throw ReliabilityFailure("remount read-only: \(readOnly.errorOutput)")
        }
    }

    deinit {
        if (try? run("/usr/bin/umount", [path]))?.status != 0 { _ = try? run("/usr/bin/umount", ["-l", path]) }
    }
}
