import Foundation
import TestSupport
import Testing
import Truce

/// Drivers that misbehave, and keys that try to reach the shell: the store stays as it was.
@Suite(.timeLimit(.minutes(10))) struct ExternalDriverSecurityTests {
    /// A conflict on `key` settled by the driver `bad` running `command`, with no fallback.
    func conflict(_ key: DocumentKey = "a.md", driver command: String) throws -> TestStore {
        let test = try TestStore()
        try test.setAttributes("* merge=bad\n")
        try test.setConfig("merge.bad.driver", command)
        try test.makeConflict(key, base: .text("a\nb\nc\n"), heads: [("laptop", .text("A\nb\nc\n")), ("phone", .text("a\nb\nC\n"))])
        return test
    }

    @Test(arguments: ["a;rm -rf b.md", "$(touch x).md", "`touch x`.md", "x' ; touch x ; '.md", "\"; touch x; \".md"])
    func aKeyNeverReachesTheShell(key: String) async throws {
        let record = TemporaryDirectory()
        let script = record.write(.text("printf '%s\\n' \"$@\" > \(record.path)/args\ncat \"$3\" > \"$1\"\n"), to: "driver.sh")
        // If %P were pasted into the command, `rm -rf b.md` or `touch x` would run in the driver's directory, which it lists.
        let test = try conflict(DocumentKey(key), driver: "touch b.md; sh \(script) %A %O %B %P %S %X %Y; ls -A > \(record.path)/listing")
        guard case .resolved = try await test.store.resolve(DocumentKey(key), registry: .standard, device: "x") else {
            Issue.record("not resolved")
            return
        }
        let listing = try String(contentsOfFile: record.file("listing"), encoding: .utf8).split(separator: "\n")
        #expect(listing.sorted() == ["b.md", "base", "current", "other"])
        let args = try String(contentsOfFile: record.file("args"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(Array(args.prefix(4)) == ["current", "base", "other", "document.md"])
        #expect(args.dropFirst(4).allSatisfy { $0.count == 7 && $0.allSatisfy(\.isHexDigit) })
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/x"))
        #expect(!FileManager.default.fileExists(atPath: test.directory.file("x")) && !FileManager.default.fileExists(atPath: test.path + "/x"))
    }

    @Test func aDriverNeverComesFromASyncedReplica() async throws {
        let marker = TemporaryDirectory()
        let other = try conflict(driver: "touch \(marker.path)/ran && cp %B %A")
        let test = try TestStore()
        try test.setAttributes("* merge=bad\n")
        _ = try await test.store.sync(with: other.path)
        #expect(try test.store.state(of: "a.md") == .inConflict)
        await #expect(throws: TruceError.unknownResolver("bad", source: "info/attributes line 1: * merge=bad")) {
            try await test.store.resolve("a.md", registry: .standard, device: "x")
        }
        #expect(!FileManager.default.fileExists(atPath: marker.file("ran")))
    }

    @Test(arguments: [
        ("kill -s SEGV $$", "it was killed by signal 11"),
        ("echo 'driver broke' >&2; exit 3", "it exited with status 3: conflicts remain (stderr: driver broke)"),
        ("true", "it exited 0 without writing its result to %A"),
        ("cat %B > %O", "it exited 0 without writing its result to %A"),
        ("cat %B", "it exited 0 without writing its result to %A"),
        ("rm %A", "it exited 0 but removed its result file %A"),
        ("rm %A && ln -s /etc/passwd %A", "it exited 0 but replaced its result file %A with something that is not a file"),
        ("rm %A && mkdir %A", "it exited 0 but replaced its result file %A with something that is not a file"),
        ("/no/such/driver %A", "it exited with status 127: conflicts remain"),
    ])
    func aDriverThatFailsLeavesTheStoreUnchangedAndSaysWhy(command: String, reason: String) async throws {
        let test = try conflict(driver: command)
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("a.md", registry: .standard, device: "x")
        guard case .needsPerson(_, "bad", let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(reasons.count == 1)
        #expect(reasons.first?.hasPrefix("bad: merging version ") == true)
        #expect(reasons.first?.contains(reason) == true, "\(reasons)")
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func aDriverThatHangsIsKilledWithItsChildrenAfterTheTimeout() async throws {
        let record = TemporaryDirectory()
        let test = try conflict(driver: "echo $$ > \(record.path)/driver; sleep 60 & echo $! > \(record.path)/child; wait")
        try test.setConfig("resolver.external.timeout", "0.5")
        let before = snapshot(ofStore: test.path)
        var result: ResolveResult?
        let elapsed = try await secondsOffThePool { result = try await test.store.resolve("a.md", registry: .standard, device: "x") }
        guard case .needsPerson(_, "bad", let reasons) = try #require(result) else {
            Issue.record("\(String(describing: result))")
            return
        }
        #expect(reasons.first?.hasSuffix("(or a process it started) ran longer than its timeout of 0.5 s and was killed") == true, "\(reasons)")
        #expect(elapsed < 20)
        #expect(snapshot(ofStore: test.path) == before)
        // The driver and its own child are gone: the process group was killed, not only the shell.
        #expect(!waitUntilGone(getpid(), within: 0.3), "the probe must see a live process")
        for name in ["driver", "child"] {
            let text = try String(contentsOfFile: record.file(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let pid = try #require(pid_t(text), "the \(name)'s pid file holds \(text.debugDescription)")
            try #require(pid > 1)
            #expect(waitUntilGone(pid), "the \(name), process \(pid), still runs after the timeout")
        }
    }

    @Test func aPerDriverTimeoutOverridesTheSharedOne() async throws {
        let test = try conflict(driver: "sleep 60")
        try test.setConfig("resolver.external.timeout", "600")
        try test.setConfig("resolver.bad.timeout", "0.3")
        guard case .needsPerson(_, _, let reasons) = try await test.store.resolve("a.md", registry: .standard, device: "x") else {
            Issue.record("not passed")
            return
        }
        #expect(reasons.first?.hasSuffix("timeout of 0.3 s and was killed") == true, "\(reasons)")
    }

    @Test func aDriverWritingBrokenJSONFailsValidationAndTheChainGoesOn() async throws {
        let test = try TestStore()
        try test.setAttributes("*.json merge=broken\n")
        try test.setConfig("merge.broken.driver", "printf '{\"a\": ' > %A")
        try test.setConfig("resolver.broken.fallback", "list-conflicts")
        try test.makeConflict("s.json", base: .text("{\"a\": 1}\n"), heads: [("laptop", .text("{\"a\": 2}\n")), ("phone", .text("{\"a\": 3}\n"))])
        let before = snapshot(ofStore: test.path)
        let result = try await test.store.resolve("s.json", registry: .standard, device: "x")
        guard case .needsPerson(_, "list-conflicts", let reasons) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(reasons == ["broken: its output is not valid JSON; nothing was written"])
        #expect(snapshot(ofStore: test.path) == before)

        try test.setConfig("resolver.broken.fallback", "overwrite-with-current")
        guard case .resolved(let version, "overwrite-with-current", _) = try await test.store.resolve("s.json", registry: .standard, device: "x")
        else {
            Issue.record("the chain did not go on")
            return
        }
        #expect(try test.store.contents(of: version) == .text("{\"a\": 3}\n"))
    }

    /// True once no process `pid` exists, within `seconds`: `kill(pid, 0)` fails with ESRCH, on Linux and macOS alike.
    ///
    /// The shell is reaped by the driver's runner and its orphaned child by
    /// init (launchd on macOS), so a killed process does not linger as a
    /// zombie, which `kill` would still find.
    private func waitUntilGone(_ pid: pid_t, within seconds: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if kill(pid, 0) == -1 && errno == ESRCH { return true }
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
