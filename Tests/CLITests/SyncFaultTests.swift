import Foundation
import TestSupport
import Testing

/// What a user can see of a store: every file's bytes, what `git fsck --strict` says, and what `truce changes` lists.
struct StoreState: Equatable {
    let files: [String: Data]
    let fsck: [String]
    let changes: String

    init(of store: String) throws {
        files = snapshot(ofStore: store)
        fsck = try Reliability.fsckProblems(store)
        changes = try truce(["changes", "--json"], store: store).output
    }

    /// The files that differ from `other`'s (added, removed or changed).
    func filesDiffering(from other: StoreState) -> [String] {
        Set(files.keys).union(other.files.keys).filter { files[$0] != other.files[$0] }.sorted()
    }
}

/// Syncs that fail or die half-way, against real servers on 127.0.0.1: each failure is one `truce:` line with the
/// right exit code and leaves the store as it was, and a killed sync is completed by the next one.
///
/// The kills land at fixed points: `TRUCE_TEST_PAUSE_AT=<point>` (read only for tests) makes the sync stop
/// there and say so on stderr, and the test sends SIGKILL once it has.
@Suite(.timeLimit(.minutes(20)), .serialized) struct SyncFaultTests {
    let home = TemporaryDirectory("truce-home")

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": home.path, "GIT_CONFIG_NOSYSTEM": "1", "SSH_AUTH_SOCK": "", "TRUCE_USERNAME": "", "TRUCE_PASSWORD": ""].merging(extra) { $1 }
    }

    /// Expects exit `status` and exactly one stderr line, starting `truce:` and containing `expected`.
    func expectOneLine(_ result: ProcessResult, status: Int32, saying expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status, "exit \(result.status): \(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.errorLines.count == 1, "stderr: \(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(result.errorLines.first?.hasPrefix("truce: ") == true, "stderr: \(result.errorOutput)", sourceLocation: sourceLocation)
        #expect(
            result.errorLines.first?.contains(expected) == true, "expected '\(expected)' in: \(result.errorOutput)", sourceLocation: sourceLocation)
    }

    /// A store with one saved document, synced to `remote`: the sync must fail with one line and leave the store as it was.
    func expectFailureLeavingTheStoreAsItWas(
        _ remote: String, status: Int32 = 2, saying expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let store = try CLIStore()
        try store.save("notes/a.md", "one\n")
        let before = try StoreState(of: store.path)
        let result = try truce(["sync", remote], store: store.path, environment: environment())
        expectOneLine(result, status: status, saying: expected, sourceLocation: sourceLocation)
        #expect(try StoreState(of: store.path) == before, "the store changed", sourceLocation: sourceLocation)
    }

    /// The version ids `truce changes` lists for `store`, in order, duplicates kept.
    func journal(of store: String) throws -> [String] {
        let result = try truce(["changes", "--json"], store: store)
        try #require(result.status == 0, "truce changes: \(result.errorOutput)")
        let json = try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        return try #require(json["changes"] as? [[String: Any]]).compactMap { $0["version"] as? String }
    }

    /// Starts `truce sync remote` on `store` with the test pause at `point`, and waits until it has stopped there.
    func syncPaused(at point: String, store: String, remote: String) throws -> BackgroundProcess {
        let process = try BackgroundProcess(["sync", remote], store: store, environment: environment(["TRUCE_TEST_PAUSE_AT": point]))
        let reached = waitUntil(seconds: 30) { process.errorOutputSoFar.contains("test pause at \(point)") }
        if !reached { process.kill() }
        try #require(reached, "the sync never reached \(point): \(process.errorOutputSoFar) \(process.outputSoFar)")
        return process
    }

    func kill(_ process: BackgroundProcess) {
        #expect(process.kill(), "the paused sync was no longer running")
        let ending = process.wait(limit: 10)
        #expect(ending.killed && ending.status == SIGKILL, "the sync ended otherwise than by the kill: \(ending.status) \(ending.errorOutput)")
    }

    /// `bytes` of random data: a document that neither zlib nor a delta makes small, so its transfer takes a while.
    static func incompressible(_ bytes: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Saves `data` as `key` in `store` through a file and returns the version id.
    @discardableResult
    func save(_ data: Data, as key: String, in store: CLIStore) throws -> String {
        let file = store.directory.write(data, to: "content-\(UUID().uuidString)")
        let result = try truce(["save", key, file], store: store.path)
        try #require(result.status == 0, "save: \(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: a sync killed between publishing heads and journaling them

    enum Receiver: String, CaseIterable {
        /// The store pulls from a git daemon hub.
        case pullingFromAHub
        /// A store on a local path takes the versions another store's sync sends it.
        case takingFromALocalSync
    }

    @Test(arguments: Receiver.allCases)
    func syncKilledBetweenPublishingAndJournalingIsCompletedByTheNextSync(_ receiver: Receiver) throws {
        let laptop = try CLIStore(), phone = try CLIStore()
        var versions = try ["a.md", "b.md", "deep/c.md"].map { try laptop.save($0, "first \($0)\n") }
        versions.append(try laptop.save("a.md", "second a.md\n"))
        // The phone is the store that adopts; the command that runs (and is killed) is the phone's sync or the laptop's.
        var daemon: GitDaemon?
        var (syncing, remote) = (laptop.path, phone.path)
        if receiver == .pullingFromAHub {
            daemon = try GitDaemon()
            (syncing, remote) = (phone.path, try #require(daemon).makeHub())
            #expect(try truce(["sync", remote], store: laptop.path, environment: environment()).status == 0)
        }
        defer { daemon?.server.stop() }

        let paused = try syncPaused(at: "sync-published", store: syncing, remote: remote)
        // The kill lands in the window: every head is published, the journal does not have them yet.
        #expect(try phone.run("cat", "a.md").output == "second a.md\n", "the heads were not published before the pause")
        #expect(try journal(of: phone.path).isEmpty, "the journal already had entries at the pause")
        kill(paused)
        #expect(try Reliability.fsckProblems(phone.path) == [])

        let next = try truce(["sync", remote], store: syncing, environment: environment())
        #expect(next.status == 0, "next sync: \(next.errorOutput)")
        #expect(next.output.hasPrefix("received 0 version(s)"), "the heads were already adopted: \(next.output)")
        let journaled = try journal(of: phone.path)
        #expect(journaled.sorted() == versions.sorted(), "truce changes lists each received version exactly once: \(journaled) for \(versions)")
        #expect(try Reliability.fsckProblems(phone.path) == [])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: phone.path + "/truce-sync").sorted() == ["lock", "newest-adopted-date"],
            "the intent stayed")
        // Completed once: yet another sync adds nothing.
        #expect(try truce(["sync", remote], store: syncing, environment: environment()).status == 0)
        #expect(try journal(of: phone.path).count == versions.count)
    }

    // MARK: hubs that cannot be used

    /// git:// is covered in `RemoteSyncTests.hubDownIsOneLine`.
    @Test(arguments: ["http", "ssh"])
    func hubDownIsOneLineAndLeavesTheStoreAsItWas(_ scheme: String) throws {
        let port = try freeLoopbackPort()
        let url = scheme == "http" ? "http://127.0.0.1:\(port)/git/hub.git" : "ssh://\(NSUserName())@127.0.0.1:\(port)/srv/hub.git"
        try expectFailureLeavingTheStoreAsItWas(url, saying: "cannot sync with '\(url)'")
    }

    /// A plain directory on git daemon is covered in `RemoteSyncTests.hubThatIsNotAGitRepositoryIsOneLine`.
    @Test func hubThatIsNotAGitRepositoryOverHTTPOrALocalPathIsOneLine() throws {
        let web = try HTTPGitServer(tls: false)
        try FileManager.default.createDirectory(atPath: web.root + "/plain", withIntermediateDirectories: true)
        let credentials = ["TRUCE_USERNAME": HTTPGitServer.user, "TRUCE_PASSWORD": HTTPGitServer.password]
        for url in [web.url(of: "plain"), web.url(of: "not-served.git")] {
            let store = try CLIStore()
            try store.save("notes/a.md", "one\n")
            let before = try StoreState(of: store.path)
            let result = try truce(["sync", url], store: store.path, environment: environment(credentials))
            expectOneLine(result, status: 2, saying: "cannot sync with '\(url)'")
            #expect(try StoreState(of: store.path) == before, "\(url): the store changed")
        }
        let plain = TemporaryDirectory("truce-plain")
        for remote in [plain.path, "file://" + plain.path] {
            try expectFailureLeavingTheStoreAsItWas(remote, saying: "is neither a Truce store nor a bare git repository")
        }
    }

    // MARK: hubs a sync may not write

    @Test func gitDaemonThatServesOnlyFetchesRefusesThePushInOneLine() throws {
        let daemon = try GitDaemon(allowingPush: false)
        let hub = try daemon.makeHub()
        let hubBefore = snapshot(ofStore: daemon.root + "/hub.git")
        try expectFailureLeavingTheStoreAsItWas(hub, saying: "cannot sync with '\(hub)': it refused our push: ")
        #expect(snapshot(ofStore: daemon.root + "/hub.git") == hubBefore, "the hub changed")
    }

    @Test func httpHubWithoutReceivePackRefusesThePushInOneLine() throws {
        let web = try HTTPGitServer(tls: false)
        let hub = try web.makeHub()
        _ = try runTool("/usr/bin/git", package: "git", ["-C", web.root + "/hub.git", "config", "http.receivepack", "false"])
        let hubBefore = snapshot(ofStore: web.root + "/hub.git")
        let store = try CLIStore()
        try store.save("notes/a.md", "one\n")
        let before = try StoreState(of: store.path)
        let result = try truce(
            ["sync", hub], store: store.path,
            environment: environment(["TRUCE_USERNAME": HTTPGitServer.user, "TRUCE_PASSWORD": HTTPGitServer.password]))
        expectOneLine(result, status: 2, saying: "cannot sync with '\(hub)': it refused our push: ")
        #expect(try StoreState(of: store.path) == before, "the store changed")
        #expect(snapshot(ofStore: web.root + "/hub.git") == hubBefore, "the hub changed")
    }

    /// A Truce store on a local path that nobody may write: `chmod -R a-w`, or for root (whom modes do not stop) `chattr -R +i`.
    @Test func localStoreThatMayNotBeWrittenIsOneLineAndBothStoresStayAsTheyWere() throws {
        let hub = try CLIStore(), store = try CLIStore()
        try hub.save("notes/hub.md", "from the hub\n")
        #expect(try store.run("sync", hub.path).status == 0)
        // Only this store has something new now: the failing sync brings nothing, and must leave both stores as they are.
        try store.save("notes/a.md", "one\n")
        let hubBefore = try StoreState(of: hub.path), before = try StoreState(of: store.path)

        let asRoot = geteuid() == 0
        let lock = asRoot ? ["/usr/bin/chattr", "-R", "+i", hub.path] : ["/usr/bin/chmod", "-R", "a-w", hub.path]
        let unlock = asRoot ? ["/usr/bin/chattr", "-R", "-i", hub.path] : ["/usr/bin/chmod", "-R", "u+w", hub.path]
        let locked = try run(lock[0], Array(lock.dropFirst()))
        defer { _ = try? run(unlock[0], Array(unlock.dropFirst())) }
        try #require(locked.status == 0, "\(lock.joined(separator: " ")) failed: \(locked.errorOutput)")
        // Not vacuous: the store's directories really refuse a new file.
        let probe = hub.path + "/objects/probe"
        let probed = FileManager.default.createFile(atPath: probe, contents: Data())
        try? FileManager.default.removeItem(atPath: probe)
        try #require(!probed, "\(lock.joined(separator: " ")) did not stop writes into the hub")

        let result = try truce(["sync", hub.path], store: store.path, environment: environment())
        expectOneLine(result, status: 2, saying: "cannot sync with '\(hub.path)': it cannot take our versions")
        _ = try run(unlock[0], Array(unlock.dropFirst()))
        #expect(try StoreState(of: hub.path) == hubBefore, "the hub changed")
        #expect(try StoreState(of: store.path) == before, "the store changed")
        // Writable again, the same sync goes through.
        #expect(try store.run("sync", hub.path).status == 0)
        #expect(try hub.run("cat", "notes/a.md").output == "one\n")
    }

    // MARK: syncs killed on the fetch side and the push side

    @Test func syncKilledWhileDownloadingLeavesOnlyTemporaryFilesAndTheNextSyncLosesNothing() throws {
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        let laptop = try CLIStore(), phone = try CLIStore()
        let big = Self.incompressible(3 << 20)
        let versions = [try save(big, as: "big.bin", in: laptop), try laptop.save("small.md", "small\n")]
        #expect(try truce(["sync", hub], store: laptop.path, environment: environment()).status == 0)
        try phone.save("phone.md", "from the phone\n")
        let before = try StoreState(of: phone.path)

        kill(try syncPaused(at: "sync-downloading", store: phone.path, remote: hub))
        let after = try StoreState(of: phone.path)
        #expect(after.fsck.isEmpty)
        #expect(after.changes == before.changes, "the journal changed")
        let changed = after.filesDiffering(from: before)
        #expect(changed.allSatisfy { $0.hasPrefix("objects/tmp_truce_incoming_") }, "files other than the quarantine changed: \(changed)")
        #expect(!changed.isEmpty, "the download wrote nothing before the kill: the pause came too late to test a killed download")
        // Prune takes a quarantine untouched for an hour for a dead sync's: age it, and prune removes it.
        for name in try FileManager.default.contentsOfDirectory(atPath: phone.path + "/objects") where name.hasPrefix("tmp_truce_incoming_") {
            _ = try runTool("/usr/bin/touch", package: "coreutils", ["-d", "2 hours ago", phone.path + "/objects/" + name])
        }
        #expect(try phone.run("prune").status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: phone.path + "/objects").filter { $0.hasPrefix("tmp_") }
        #expect(leftovers.isEmpty, "prune left \(leftovers)")

        let next = try truce(["sync", hub], store: phone.path, environment: environment())
        #expect(next.status == 0, "next sync: \(next.errorOutput)")
        #expect(try phone.run("cat", "big.bin").stdout == big)
        #expect(try phone.run("cat", "phone.md").output == "from the phone\n")
        let journaled = try journal(of: phone.path)
        #expect(journaled.count == 3 && Set(versions).isSubset(of: journaled), "\(journaled)")
        #expect(try Reliability.fsckProblems(phone.path) == [])
    }

    @Test func syncKilledWhilePushingLeavesTheHubValidAndTheNextSyncCompletes() throws {
        let daemon = try GitDaemon()
        let hub = try daemon.makeHub()
        let hubPath = daemon.root + "/hub.git"
        let laptop = try CLIStore(), phone = try CLIStore()
        let big = Self.incompressible(3 << 20)
        try save(big, as: "big.bin", in: laptop)
        try laptop.save("small.md", "small\n")
        let before = try StoreState(of: laptop.path)

        kill(try syncPaused(at: "sync-sending", store: laptop.path, remote: hub))
        #expect(try StoreState(of: laptop.path) == before, "the pushing store changed")
        let fsck = try git(["-C", hubPath, "fsck", "--strict", "--no-progress"])
        #expect(fsck.status == 0, "the hub is damaged: \(fsck.output) \(fsck.errorOutput)")

        let next = try truce(["sync", hub], store: laptop.path, environment: environment())
        #expect(next.status == 0, "next sync: \(next.errorOutput)")
        #expect(try git(["-C", hubPath, "fsck", "--strict", "--no-progress"]).status == 0)
        let pulled = try truce(["sync", hub], store: phone.path, environment: environment())
        #expect(pulled.status == 0, "pull: \(pulled.errorOutput)")
        #expect(try phone.run("cat", "big.bin").stdout == big)
        #expect(try phone.run("cat", "small.md").output == "small\n")
        #expect(try journal(of: phone.path).count == 2)
    }

    // MARK: a disk that fills during a sync

    enum Source: String, CaseIterable {
        case gitDaemonHub, localStore
    }

    /// The store sits on a 1 MiB tmpfs when this process may mount one (root), else under `ulimit -f` (RLIMIT_FSIZE,
    /// with SIGXFSZ ignored so the write fails with EFBIG instead of killing the process). A 3 MiB document fills either.
    /// `TRUCE_TEST_FULL_DISK=ulimit` takes the second way even for root, to check it too.
    @Test(arguments: Source.allCases)
    func diskFillingDuringASyncIsOneLineExitThreeAndALaterSyncWithSpaceSucceeds(_ source: Source) throws {
        let laptop = try CLIStore()
        let big = Self.incompressible(3 << 20)
        let version = try save(big, as: "big.bin", in: laptop)
        var daemon: GitDaemon?
        var remote = laptop.path
        if source == .gitDaemonHub {
            daemon = try GitDaemon()
            remote = try #require(daemon).makeHub()
            #expect(try truce(["sync", remote], store: laptop.path, environment: environment()).status == 0)
        }
        defer { daemon?.server.stop() }
        let disk = try SmallDisk()
        defer { disk.remove() }
        let store = disk.directory + "/store"
        #expect(try truce(["init"], store: store).status == 0)
        let before = try StoreState(of: store)

        let full = try disk.run(truceExecutable, ["--store", store, "sync", remote], environment: environment())
        expectOneLine(full, status: 3, saying: disk.failure)
        #expect(try StoreState(of: store) == before, "the store changed (\(disk.kind))")

        try disk.makeRoom()
        let later = try truce(["sync", remote], store: store, environment: environment())
        #expect(later.status == 0, "the sync with space (\(disk.kind)): \(later.errorOutput)")
        #expect(try truce(["cat", "big.bin"], store: store).stdout == big)
        #expect(try journal(of: store) == [version])
        #expect(try Reliability.fsckProblems(store) == [])
    }
}

/// A directory where writing more than about 1 MiB fails: a tmpfs of that size, or (without the right to mount)
/// a file size limit on the processes `run` starts there.
final class SmallDisk {
    enum Kind: String {
        case tmpfs = "a 1 MiB tmpfs"
        case fileSizeLimit = "ulimit -f (RLIMIT_FSIZE)"
    }
    private let parent = TemporaryDirectory("truce-small-disk")
    let directory: String
    private(set) var kind: Kind
    private var mounted = false

    init() throws {
        directory = parent.file("disk")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        kind = .fileSizeLimit
        let mayMount = ProcessInfo.processInfo.environment["TRUCE_TEST_FULL_DISK"] != "ulimit" && geteuid() == 0
        if mayMount, try TestSupport.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory]).status == 0 {
            kind = .tmpfs
            mounted = true
        }
        print("sync faults: a full disk is \(kind.rawValue)")
    }

    /// The words the error line must hold: the errno message of the failed write.
    var failure: String { kind == .tmpfs ? "No space left on device" : "File too large" }

    /// Runs a process whose writes there fail once the disk is full.
    func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> ProcessResult {
        guard kind == .fileSizeLimit else { return try TestSupport.run(executable, arguments, environment: environment) }
        // 2048 blocks of 512 bytes; SIGXFSZ ignored (kept across exec) turns the limit into EFBIG.
        let command = "trap '' XFSZ; ulimit -f 2048; exec \"$0\" \"$@\""
        return try TestSupport.run("/bin/sh", ["-c", command, executable] + arguments, environment: environment)
    }

    /// Gives the disk room for the sync that follows.
    func makeRoom() throws {
        guard mounted else { return }
        let result = try TestSupport.run("/usr/bin/mount", ["-o", "remount,size=64m", directory])
        guard result.status == 0 else { throw ServerError("remounting the tmpfs larger failed: \(result.errorOutput)") }
    }

    func remove() {
        guard mounted else { return }
        if (try? TestSupport.run("/usr/bin/umount", [directory]))?.status != 0 { _ = try? TestSupport.run("/usr/bin/umount", ["-l", directory]) }
        mounted = false
    }
}
