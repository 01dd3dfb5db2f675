import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// Reading a store never holds more pack files open than `Libgit2.openPackFiles`, however many packs it has:
/// libgit2's default keeps every pack it reads open, and a process past about 1,300 descriptors crashes in
/// Foundation's `Process.run`.
@Suite(.timeLimit(.minutes(5))) struct PackDescriptorTests {
    @Test func readingAStoreOfManyPacksKeepsFewOpen() throws {
        let directory = TemporaryDirectory("truce-packs-open")
        let path = directory.file("repo.git")
        let writer = try Repository.createBare(at: path)
        let packCount = Libgit2.openPackFiles + 64
        var ids: [ObjectID] = []
        for index in 0..<packCount {
            let bytes = Array("document \(index)\n".utf8)
            let id = ObjectID.blobHash(of: bytes)
            try PackWriter(repository: writer).write([id], known: [id: RawObject(type: 3, bytes: bytes)], compression: .stored)
            ids.append(id)
        }
        let packDirectory = try FileManager.default.contentsOfDirectory(atPath: path + "/objects/pack")
        #expect(packDirectory.filter { $0.hasSuffix(".pack") }.count == packCount)

        let reader = try Repository.openBare(at: path)
        for (index, id) in ids.enumerated() {
            #expect(try reader.readBlob(id) == Data("document \(index)\n".utf8))
        }
        // The limit is the process's, so other tests' packs can only leave fewer of this store's open.
        let open = Self.openDescriptorTargets().filter { $0.hasPrefix(path + "/objects/pack/") }
        #expect(open.count <= Libgit2.openPackFiles, "\(open.count) of \(packCount) packs open")
        #expect(try git(["-C", path, "fsck", "--strict"]).status == 0)
    }

    /// Where each of this process's descriptors points, as /proc lists them.
    static func openDescriptorTargets() -> [String] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
    }
}
