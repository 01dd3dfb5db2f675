import Foundation
import Synchronization
import TestSupport
import Testbed
import Testing

@testable import TruceGit

/// A rewrite of `packed-refs` keeps every line it was not asked to change: lines other writers packed before it took
/// the lock, and (with `keepingExisting`) a line already there under a name it adds. `git for-each-ref` is the oracle.
@Suite(.timeLimit(.minutes(10))) struct PackedReferencesTests {
    final class Fixture {
        let directory = TemporaryDirectory("truce-packed-refs")
        var path: String { directory.file("repo.git") }
        let repository: Repository

        init() throws { repository = try Repository.createBare(at: directory.file("repo.git")) }

        /// A new blob's id: something real for a line to name.
        func object(_ text: String) throws -> ObjectID {
            let result = try git(["-C", path, "hash-object", "-w", "--stdin"], input: .text(text))
            return try #require(ObjectID(hex: result.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result.errorOutput)")
        }

        /// Every reference as git reads it: name to target.
        func gitReferences() throws -> [String: String] {
            let result = try git(["-C", path, "for-each-ref", "--format=%(refname) %(objectname)"])
            try #require(result.status == 0, "\(result.errorOutput)")
            var references: [String: String] = [:]
            for line in result.output.split(separator: "\n") {
                let fields = line.split(separator: " ")
                references[String(fields[0])] = String(fields[1])
            }
            return references
        }
    }

    /// A listing that reads many records (a snapshot lists every head) lets their pages of the mapped file go once
    /// it has copied them out: they no longer count as the process's memory through the work after it (a first push of
    /// a million documents held 141 MB of them). The mapping's resident size in `/proc/self/smaps` is the oracle.
    @Test func aListingOfManyRecordsLetsTheirPagesGo() throws {
        let fixture = try Fixture()
        let (target, names, path) = try Self.writeManyHeads(in: fixture)
        let packed = try PackedReferences(readingIn: fixture.path + "/")
        let listed = try packed.references(withPrefix: "refs/truce/heads/")
        #expect(listed.count == names.count && listed.first?.target == target)
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 4 << 20, "a file of many pages")
        let resident = try residentKiB(ofMapping: path)
        #expect(resident * 1024 < size / 20, "\(resident) KiB of a \(size)-byte file still resident after the listing")
        // What was let go reads back unchanged.
        #expect(try packed.references(withPrefix: "refs/truce/heads/d/doc00007.txt/").map(\.name) == [names[7]])
    }

    @Test func lookupsOfManyPrefixesLetTheirPagesGo() throws {
        let fixture = try Fixture()
        let (target, names, path) = try Self.writeManyHeads(in: fixture)
        let packed = try PackedReferences(readingIn: fixture.path + "/")
        // Every tenth document, backwards, and one that is not there: lookups spread over the whole file, as a sync's
        // batch is, asked for in no order.
        let prefixes =
            ["refs/none/"] + stride(from: 0, to: names.count, by: 10).reversed().map { String(format: "refs/truce/heads/d/doc%05d.txt/", $0) }
        var probes = 0
        let found = try packed.references(withEachPrefix: prefixes, probes: &probes)
        #expect(found.count == prefixes.count && found.first?.isEmpty == true)
        #expect(found.dropFirst().allSatisfy { $0.count == 1 && $0[0].target == target })
        #expect(found[1].map(\.name) == [names[39_990]] && found.last?.map(\.name) == [names[0]])
        // Each search starts where the one before it ended: a few records read for each, not a binary search of all.
        #expect(probes < prefixes.count * 12, "\(probes) records read for \(prefixes.count) prefixes")
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let resident = try residentKiB(ofMapping: path)
        #expect(resident * 1024 < size / 20, "\(resident) KiB of a \(size)-byte file still resident after the lookups")
    }

    /// A `packed-refs` file of 40,000 heads (several MB) in `fixture`, all at one commit: that commit, the names in
    /// order of their numbers, and the file's path.
    private static func writeManyHeads(in fixture: Fixture) throws -> (target: ObjectID, names: [String], path: String) {
        let target = try fixture.object("one")
        let names = (0..<40_000).map { String(format: "refs/truce/heads/d/doc%05d.txt/", $0) + target.hex }
        let lines = names.sorted().map { "\(target.hex) \($0)\n" }.joined()
        let path = fixture.path + "/packed-refs"
        try Data((PackedReferences.header + lines).utf8).write(to: URL(fileURLWithPath: path))
        return (target, names, path)
    }

    /// The resident KiB of this process's mappings of the file at `path`, from `/proc/self/smaps`; fails when the
    /// process has no such mapping.
    private func residentKiB(ofMapping path: String) throws -> Int {
        // Read to its end: a file of /proc says it has no size, and a read by size stops short.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inMapping = false, mappings = 0, resident = 0
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inMapping = line.hasSuffix(" " + path)
                if inMapping { mappings += 1 }
            } else if inMapping, line.hasPrefix("Rss:") {
                resident += Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            }
        }
        try #require(mappings > 0, "no mapping of \(path)")
        return resident
    }

    @Test func keepingExistingLeavesALineAnotherWriterPackedAsItIs() throws {
        let fixture = try Fixture()
        let (theirs, ours, other) = (try fixture.object("theirs"), try fixture.object("ours"), try fixture.object("other"))
        // Another writer packed refs/a first.
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/a", theirs)], removing: [])
        try PackedReferences.update(
            in: fixture.repository.gitDirectory, adding: [("refs/a", ours), ("refs/b", other)], removing: [], keepingExisting: true)
        #expect(try fixture.gitReferences() == ["refs/a": theirs.hex, "refs/b": other.hex])
        // Without it, an addition replaces the line: the two modes differ exactly there.
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/a", ours)], removing: [])
        #expect(try fixture.gitReferences() == ["refs/a": ours.hex, "refs/b": other.hex])
    }

    @Test func aRewriteKeepsWhatAnotherWriterPackedAfterThisHandleReadTheFile() throws {
        let fixture = try Fixture()
        let first = try fixture.object("first"), second = try fixture.object("second"), third = try fixture.object("third")
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/truce/x/1", first)], removing: [])
        // This handle reads (and caches) the file as it is now.
        #expect(try fixture.repository.packedReferences().references(withPrefix: "refs/").map(\.name) == ["refs/truce/x/1"])
        // Meanwhile git itself packs two more refs.
        for (name, id) in [("refs/truce/x/2", second), ("refs/truce/y", third)] {
            #expect(try git(["-C", fixture.path, "update-ref", name, id.hex]).status == 0)
        }
        #expect(try git(["-C", fixture.path, "pack-refs", "--all", "--prune"]).status == 0)
        // A rewrite through the stale handle adds one line and removes another: git's lines stay.
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/truce/z", first)], removing: ["refs/truce/x/1"])
        #expect(try fixture.gitReferences() == ["refs/truce/x/2": second.hex, "refs/truce/y": third.hex, "refs/truce/z": first.hex])
        // And deleting through the handle's own cached view removes only what it names.
        try fixture.repository.deleteReferences([("refs/truce/y", third)])
        #expect(try fixture.gitReferences() == ["refs/truce/x/2": second.hex, "refs/truce/z": first.hex])
    }

    @Test func writersPackingAtOnceEachKeepTheOthersLines() throws {
        let fixture = try Fixture()
        let target = try fixture.object("target")
        let writers = 4, linesEach = 25
        let gitDirectory = fixture.repository.gitDirectory
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for line in 0..<linesEach {
                // git's lock: a writer that finds it held waits, as `withLockRetries` does in the store.
                while true {
                    do {
                        try PackedReferences.update(in: gitDirectory, adding: [("refs/w\(writer)/\(line)", target)], removing: [])
                        break
                    } catch let error as GitError where error.isLocked {
                        usleep(200)
                    } catch {
                        failures.withLock { $0.append("\(writer)/\(line): \(error)") }
                        break
                    }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let references = try fixture.gitReferences()
        #expect(references.count == writers * linesEach, "\(writers * linesEach - references.count) packed lines were lost")
        #expect(!FileManager.default.fileExists(atPath: gitDirectory + "packed-refs.lock"))
    }

    /// The file's reference lines (peeled lines too) in file order, as bytes.
    private func lines(of fixture: Fixture) throws -> [[UInt8]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.repository.gitDirectory + "packed-refs"))
        return data.split(separator: 0x0A).map { Array($0) }.filter { $0.first != UInt8(ascii: "#") }
    }

    @Test func manyRewritesAgreeWithAModelAndLeaveTheFileSortedByBytes() throws {
        let fixture = try Fixture()
        let targets = try (0..<3).map { try fixture.object("target \($0)") }
        var model: [String: ObjectID] = [:]
        var random = SeededRandom(seed: 7)
        // Names whose byte order differs from a naive string order: digits, upper and lower case, a dash, a dot.
        let names = (0..<40).map { "refs/truce/\(["a", "B", "a-b", "a.b", "a0", "Z"][$0 % 6])/\($0 * 37 % 101)" }
        for _ in 0..<30 {
            var additions: [(name: String, target: ObjectID)] = []
            var removals = Set<String>()
            for _ in 0..<random.int(0..<6) { additions.append((random.pick(names), random.pick(targets))) }
            for _ in 0..<random.int(0..<4) { removals.insert(random.pick(names)) }
            try PackedReferences.update(in: fixture.repository.gitDirectory, adding: additions, removing: removals)
            // The documented rule: removals go, then the first addition of each name lands (a name in both is added).
            for name in removals { model[name] = nil }
            var seen = Set<String>()
            for addition in additions where seen.insert(addition.name).inserted { model[addition.name] = addition.target }
            #expect(try fixture.gitReferences() == model.mapValues(\.hex))
            let order = try lines(of: fixture).map { Array($0.dropFirst(41)) }
            #expect(zip(order, order.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "packed-refs is not in byte order")
        }
    }

    @Test func aStoreWithoutTheFileTakesTheMergeNotTheWholeSort() throws {
        let fixture = try Fixture()
        // The whole sort holds every line in memory: a first import of a million heads must not take it.
        #expect(try PackedReferences(readingIn: fixture.repository.gitDirectory).recordsAreSorted())
        let blob = try fixture.object("content")
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/b", blob), ("refs/a", blob)], removing: [])
        #expect(try PackedReferences(readingIn: fixture.repository.gitDirectory).recordsAreSorted())
        try Data("# pack-refs with: peeled\n\(blob.hex) refs/a\n".utf8).write(
            to: URL(fileURLWithPath: fixture.repository.gitDirectory + "packed-refs"))
        #expect(try !PackedReferences(readingIn: fixture.repository.gitDirectory).recordsAreSorted(), "a header without 'sorted' promises nothing")
    }

    @Test func anUnsortedFileIsSortedWholeAndATagKeepsItsPeeledLine() throws {
        let fixture = try Fixture()
        let blob = try fixture.object("content")
        let tree = try git(["-C", fixture.path, "mktree"], input: .text("100644 blob \(blob.hex)\tfile\n")).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let commit = try git(
            ["-C", fixture.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree, "-m", "c"]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try git(["-C", fixture.path, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "v1", "-m", "tag", commit]).status == 0)
        #expect(try git(["-C", fixture.path, "pack-refs", "--all", "--prune"]).status == 0)
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/a", blob), ("refs/z", blob)], removing: [])
        let peeled = try lines(of: fixture)
        let tagLine = try #require(peeled.firstIndex { $0.dropFirst(41).elementsEqual("refs/tags/v1".utf8) })
        #expect(peeled[tagLine + 1] == Array("^\(commit)".utf8), "the tag's peeled line must follow it")
        #expect(try git(["-C", fixture.path, "rev-parse", "v1^{commit}"]).output.hasPrefix(commit))
        // An older writer's file: no "sorted" in the header, lines out of order.
        let unsorted = "# pack-refs with: peeled\n\(blob.hex) refs/y\n\(blob.hex) refs/b\n"
        try Data(unsorted.utf8).write(to: URL(fileURLWithPath: fixture.repository.gitDirectory + "packed-refs"))
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/m", blob)], removing: ["refs/y"])
        #expect(try lines(of: fixture).map { String(decoding: $0.dropFirst(41), as: UTF8.self) } == ["refs/b", "refs/m"])
    }

    /// A header that promises order over records out of order: the merge finds out past its first mebibyte of output,
    /// and the file is written again, whole and sorted, with nothing of the first attempt left in it.
    @Test func aFileThatBreaksItsPromiseOfOrderIsWrittenAgainSorted() throws {
        let fixture = try Fixture()
        let blob = try fixture.object("content")
        let names = (0..<20_000).map { String(format: "refs/bench/%05d", $0) }
        let text = PackedReferences.header + (names + ["refs/bench/00000-late"]).map { "\(blob.hex) \($0)\n" }.joined()
        #expect(text.utf8.count > 1 << 20, "the merge flushes its first mebibyte before it meets the record out of order")
        try Data(text.utf8).write(to: URL(fileURLWithPath: fixture.repository.gitDirectory + "packed-refs"))
        try PackedReferences.update(in: fixture.repository.gitDirectory, adding: [("refs/bench/10000-new", blob)], removing: ["refs/bench/00001"])
        let expected = (names.filter { $0 != "refs/bench/00001" } + ["refs/bench/00000-late", "refs/bench/10000-new"]).sorted()
        #expect(try lines(of: fixture).map { String(decoding: $0.dropFirst(41), as: UTF8.self) } == expected)
        let file = try String(contentsOfFile: fixture.repository.gitDirectory + "packed-refs", encoding: .utf8)
        #expect(file.hasPrefix(PackedReferences.header) && file.components(separatedBy: "# pack-refs").count == 2)
        #expect(try git(["-C", fixture.path, "fsck", "--strict", "--no-dangling"]).status == 0)
    }
}
