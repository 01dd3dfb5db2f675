import Foundation
import TestSupport
import Testing

/// Every writer killed just before each of its file-system calls in turn: nothing the dead process left blocks anyone.
///
/// The tracer (`CrashTrace`) numbers the calls a writer makes on the store;
/// `TRUCE_TRACE_STOP=<n>` kills it with SIGKILL right before call `n`, inside
/// libgit2 as well as in Truce, so a kill lands while a lock file is held,
/// between a reference's link and its lock's unlink, mid-pack, mid-log. Then
/// time passes (the lock files are dated a minute back: past
/// `staleLockAge`), and the next writer (of the same documents after one
/// kill, of another document after the next) must succeed, `truce prune`
/// must succeed and leave no lock file, `git gc` must succeed on the store,
/// `git fsck --strict` must be clean and every version acknowledged before
/// must still be there. `make test` kills at each step that takes, moves or
/// drops a lock file or writes a file writers share; `HEAVY=1` at every call.
@Suite(.timeLimit(Reliability.isHeavy ? .minutes(180) : .minutes(20)), .serialized) struct KilledWriterTests {
    /// Call numbers of `calls` worth a kill: all of them, or each step that takes, moves or drops a lock file or writes a
    /// file writers share (`packed-refs`, the save log, a sync's files), the first of each kind (calls on paths alike
    /// but for their hexadecimal names), and the first and last call.
    static func killPoints(_ calls: [TracedCall], all: Bool) -> [UInt32] {
        let numbered = calls.filter { $0.kind != .acknowledge }
        guard !all else { return numbered.map(\.sequence) }
        let shared = ["packed-refs", "truce-saves.log", "truce-sync/", "truce-prune.lock"]
        var seen: [String: Int] = [:]
        return numbered.enumerated().filter { index, call in
            let paths = [call.path, call.secondPath]
            guard
                index == 0 || index == numbered.count - 1 || paths.contains(where: { $0.hasSuffix(".lock") || shared.contains(where: $0.hasPrefix) })
            else { return false }
            let kind = "\(call.kind) " + paths.joined(separator: " ").replacing(/[0-9a-fA-F]{2,}/, with: "#")
            seen[kind, default: 0] += 1
            return seen[kind]! == 1
        }.map(\.element.sequence)
    }

    /// What is wrong once the writer of `setup` was killed: empty when everything after it works.
    ///
    /// With `sameDocuments`, the next writers save the documents the killed
    /// one wrote (each takes over a lock it left on its document's refs);
    /// else a document of its own (the locks are left to prune). Then prune
    /// must leave no lock file, and git gc must work.
    static func problemsAfterKill(_ setup: StoreWriter.Setup, keeping acknowledged: Set<String>, sameDocuments: Bool) throws -> [String] {
        var problems: [String] = []
        ageLockFiles(in: setup.store, by: 60)
        for document in sameDocuments ? setup.documents : ["after-the-kill.txt"] {
            let next = try truce(["save", document, "-", "--device", "next"], store: setup.store, input: .text("next writer\n"))
            if next.status != 0 { problems.append("the next save of \(document) fails: \(next.errorLines.joined(separator: " "))") }
        }
        if sameDocuments {
            let directories = try setup.documents.map { document in
                let hash = try git(["hash-object", "--stdin"], input: .text(document)).output.trimmingCharacters(in: .whitespacesAndNewlines)
                return "refs/truce/heads/\(hash.prefix(2))/\(hash.dropFirst(2))/"
            }
            let left = lockFiles(in: setup.store).filter { lock in directories.contains { lock.hasPrefix($0) } }
            if !left.isEmpty { problems.append("head ref locks left after the next writers of their documents: \(left)") }
        }
        let prune = try truce(["prune"], store: setup.store)
        if prune.status != 0 { problems.append("prune fails: \(prune.errorLines.joined(separator: " "))") }
        let left = lockFiles(in: setup.store)
        if !left.isEmpty { problems.append("lock files left after the next writers and prune: \(left)") }
        let gc = try git(["-C", setup.store, "gc", "--quiet"])
        let gcErrors = gc.errorLines.filter { !$0.hasPrefix("warning: core.fsyncObjectFiles") }
        if gc.status != 0 || !gcErrors.isEmpty { problems.append("git gc fails (\(gc.status)): \(gcErrors.joined(separator: " "))") }
        problems += try Reliability.fsckProblems(setup.store).map { "git fsck: \($0)" }
        let lost = try Reliability.lostVersions(acknowledged, in: setup.store)
        if !lost.isEmpty { problems.append("lost acknowledged versions \(lost.map { String($0.prefix(12)) })") }
        return problems
    }

    /// The lock files under `store`, relative: git's and libgit2's `*.lock`, and Truce's own but the sync lock's file,
    /// which is there for good (the lock is an flock on it), with the save log's half-made creations (its lock is an
    /// flock on the log itself, which a dead process no longer holds). A killed sync's scratch repository
    /// (`objects/tmp_truce_incoming_…`) may hold its own: nothing but that sync ever used them, and prune removes the
    /// directory with the other temporary files.
    static func lockFiles(in store: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: store)
        var found: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if relative == "truce-sync/lock" || relative.hasPrefix("objects/tmp_truce_incoming_") { continue }
            if relative.hasSuffix(".lock") || relative.contains(".lock.stale-") || relative.hasPrefix("truce-saves.log.new-") {
                found.append(relative)
            }
        }
        return found.sorted()
    }

    /// Dates every lock file under `store` `seconds` back, as if that much time had passed since the kill.
    static func ageLockFiles(in store: String, by seconds: TimeInterval) {
        for relative in lockFiles(in: store) {
            try? FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -seconds)], ofItemAtPath: store + "/" + relative)
        }
    }

    /// `truce init` killed before each of its calls: the directory is either a whole store (killed after the format
    /// marker) or none that opens, which the next `init` makes whole; either way the store then works.
    @Test func anInitKilledAtAnyCallIsCompletedByTheNextInit() throws {
        let parent = TemporaryDirectory("truce-init-kill")
        let probe = try CrashTrace.truce(["init"], store: parent.file("probe"), root: parent.path)
        try #require(probe.result.status == 0, "\(probe.result.errorOutput)")
        var problems: [String] = []
        let points = probe.calls.filter { $0.kind != .acknowledge }.map(\.sequence)
        for stop in points {
            let store = parent.file("store-\(stop)")
            let run = try CrashTrace.truce(["init"], store: store, root: parent.path, stop: stop)
            guard run.result.status != 0 else { continue }
            let opened = try truce(["status"], store: store)
            let again = try truce(["init"], store: store)
            if opened.status == 0 {
                // Killed after the format marker: the store is whole, and init leaves it alone.
                if again.status != 2 { problems.append("killed before call \(stop): init over a whole store exited \(again.status)") }
            } else {
                if opened.errorLines.count != 1 { problems.append("killed before call \(stop): status says \(opened.errorOutput)") }
                if again.status != 0 { problems.append("killed before call \(stop): the next init fails: \(again.errorOutput)") }
            }
            let saved = try truce(["save", "a.md", "-"], store: store, input: .text("a\n"))
            if saved.status != 0 { problems.append("killed before call \(stop): a save after the next init fails: \(saved.errorOutput)") }
            problems += try Reliability.fsckProblems(store).map { "killed before call \(stop): git fsck: \($0)" }
        }
        print("killed writers: init: killed before each of its \(points.count) calls")
        #expect(points.count > 10)
        #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
    }

    @Test(arguments: StoreWriter.selected) func aWriterKilledBeforeAnyOfItsCallsLeavesNothingThatBlocksTheNext(_ writer: StoreWriter) throws {
        let template = try writer.prepare()
        let before = try Reliability.reachableVersions(in: template.store)
        let probe = try template.copy()
        let traced = try CrashTrace.truce(probe.arguments, store: probe.store, input: probe.input, environment: probe.environment)
        try #require(traced.result.status == 0, "\(writer.rawValue): \(traced.result.errorOutput)")
        // What was acknowledged before; of it, a prune keeps what a whole prune keeps (it drops deleted documents).
        let acknowledged = writer.dropsDeletedDocuments ? before.intersection(try Reliability.reachableVersions(in: probe.store)) : before
        let points = Self.killPoints(traced.calls, all: Reliability.isHeavy)
        var problems: [String] = [], attempts = 0, killed = 0, gitGCBlockedBeforeRecovery = 0
        for stop in points where problems.count < 5 {
            let setup = try template.copy()
            let run = try CrashTrace.truce(setup.arguments, store: setup.store, input: setup.input, stop: stop, environment: setup.environment)
            attempts += 1
            // Killed there, or (when this run took another path) finished: both must leave a store the next writer uses.
            if run.result.status != 0 { killed += 1 }
            let call = traced.calls.first { $0.sequence == stop }.map { "\($0.kind) \($0.path)" } ?? "?"
            // Plain git on the store as the kill left it, for the record: a lock git itself would take blocks it.
            if Reliability.isHeavy {
                let untouched = try setup.copy()
                if try git(["-C", untouched.store, "gc", "--quiet"]).status != 0 { gitGCBlockedBeforeRecovery += 1 }
            }
            // Every other kill, the next writers save the killed one's documents; the others, a document of their own.
            for problem in try Self.problemsAfterKill(setup, keeping: acknowledged, sameDocuments: attempts % 2 == 1) {
                problems.append("killed before call \(stop) (\(call)): \(problem)")
            }
        }
        print(
            "killed writers: \(writer.rawValue): \(traced.calls.count) calls, killed before \(attempts) of them (\(killed) died there); "
                + (Reliability.isHeavy
                    ? "plain git gc right after the kill, before any truce command, failed after \(gitGCBlockedBeforeRecovery)" : ""))
        #expect(killed >= attempts / 2, "most kills should land: \(killed) of \(attempts)")
        #expect(problems.isEmpty, "\(writer.rawValue):\n\(problems.joined(separator: "\n"))")
    }
}
