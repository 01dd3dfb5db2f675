import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct CommandTests {
    @Test func saveCatVersionsLogWithOneDevice() throws {
        let store = try CLIStore()
        let first = try store.save("notes/todo.md", "one\n", "--device", "laptop", "--date", "2026-11-30T09:00:00Z")
        let second = try store.save("notes/todo.md", "two\n", "--device", "laptop", "--date", "2026-11-30T10:00:00+01:00")
        #expect(first.count == 40 && second.count == 40)

        #expect(try store.run("cat", "notes/todo.md").output == "two\n")
        #expect(try store.run("cat", "notes/todo.md", "--version", String(first.prefix(8))).output == "one\n")

        let versions = try store.run("versions", "notes/todo.md")
        #expect(versions.status == 0)
        // 10:00+01:00 is its parent's 09:00Z: a version is dated one second past its parent (hybrid dates).
        #expect(versions.output == "notes/todo.md: settled\ncurrent   \(second)  2026-11-30T09:00:01Z  laptop  save\n")

        let log = try store.run("log", "notes/todo.md").output.split(separator: "\n")
        #expect(log.map { String($0.prefix(40)) } == [second, first])
        #expect(try store.run("status").output == "no documents in conflict\n")
    }

    @Test func saveReadsAFileByteForByte() throws {
        let store = try CLIStore()
        let bytes = Data([0, 1, 2, 0xFF, 0xFE, 13, 10, 0x80])
        let file = store.directory.write(bytes, to: "blob.bin")
        let result = try store.run("save", "images/blob.bin", file, "--device", "laptop")
        #expect(result.status == 0)
        #expect(try store.run("cat", "images/blob.bin").stdout == bytes)
        let empty = store.directory.write(Data(), to: "empty")
        #expect(try store.run("save", "empty.txt", empty).status == 0)
        #expect(try store.run("cat", "empty.txt").stdout.isEmpty)
    }

    @Test func twoDevicesFromOneBaseShowAConflictEverywhere() throws {
        let store = try CLIStore()
        let base = try store.save("notes/todo.md", "a\nb\n", "--device", "laptop", "--date", "2026-11-30T09:00:00Z")
        let laptop = try store.save("notes/todo.md", "A\nb\n", "--device", "laptop", "--base", base, "--date", "2026-11-30T10:00:00Z")
        let phoneResult = try store.run(
            "save", "notes/todo.md", "-", "--device", "phone", "--base", base, "--date", "2026-11-30T11:00:00Z",
            input: .text("a\nB\n"))
        #expect(phoneResult.status == 0)
        #expect(phoneResult.errorLines == ["truce: note: notes/todo.md is now in conflict; see 'truce versions notes/todo.md'"])
        let phone = phoneResult.output.trimmingCharacters(in: .newlines)

        let versions = try store.json("versions", "notes/todo.md")
        #expect(versions["state"] as? String == "inConflict")
        #expect((versions["current"] as? [String: Any])?["id"] as? String == phone)
        #expect((versions["current"] as? [String: Any])?["deviceName"] as? String == "phone")
        #expect((versions["current"] as? [String: Any])?["modificationDate"] as? String == "2026-11-30T11:00:00Z")
        #expect((versions["conflicts"] as? [[String: Any]])?.map { $0["id"] as? String } == [laptop])
        #expect((versions["base"] as? [String: Any])?["id"] as? String == base)

        let status = try store.json("status")
        #expect((status["inConflict"] as? [[String: Any]])?.map { $0["document"] as? String } == ["notes/todo.md"])
        #expect(try store.run("status").output == "notes/todo.md: in conflict (2 heads)\n")

        let explain = try store.run("explain", "notes/todo.md").output
        #expect(explain.contains("why current: it has the latest author date (2026-11-30T11:00:00Z) of the 2 heads"))
        #expect(explain.contains("merge attribute: unspecified"))
        let explainJSON = try store.json("explain", "notes/todo.md")
        #expect(explainJSON["mergeAttribute"] as? String == "unspecified")

        let graph = try git("-C", store.path, "log", "--graph", "--all", "--format=%an %s").output
        #expect(graph.contains("phone Save notes/todo.md"))
        #expect(graph.contains("laptop Save notes/todo.md"))
        #expect(try git("-C", store.path, "fsck", "--strict").status == 0)
    }

    @Test func deleteMakesTheDocumentDeletedAndCatSaysSo() throws {
        let store = try CLIStore()
        let saved = try store.save("a.txt", "x\n")
        let deleted = try store.run("delete", "a.txt", "--device", "phone", "--json")
        #expect(deleted.status == 0)
        let report = try #require(JSONSerialization.jsonObject(with: deleted.stdout) as? [String: Any])
        #expect(report["state"] as? String == "deleted")
        let cat = try store.run("cat", "a.txt")
        #expect(cat.status == 2)
        #expect(cat.errorLines.count == 1)
        #expect(try store.run("cat", "a.txt", "--version", saved).output == "x\n")
        #expect(try store.run("versions", "a.txt").output.hasPrefix("a.txt: deleted\n"))
    }

    @Test func theStoreComesFromTheEnvironmentOrTheWorkingDirectory() throws {
        let store = try CLIStore()
        try store.save("a.txt", "x\n")
        let viaEnvironment = try truce(["cat", "a.txt"], environment: ["TRUCE_STORE": store.path])
        #expect(viaEnvironment.output == "x\n")
        let directory = TemporaryDirectory()
        #expect(try run(truceExecutable, ["init"], directory: directory.path).status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file(".truce/config")))
    }
}
