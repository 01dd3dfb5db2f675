import Foundation
import TestSupport
import Testing
import Truce

/// Answers a person gave, recorded and replayed (git's rerere), and shared with every replica by sync.
@Suite(.timeLimit(.minutes(10)))
struct RecordedAnswerTests {
    /// Runs git in `directory` with only the configuration a test gives it.
    static func git(_ arguments: [String], in directory: String) throws -> String {
        let result = try run(
            "/usr/bin/env", ["git", "-C", directory, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "rerere.enabled=true"] + arguments,
            environment: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"])
        return result.output + result.errorOutput
    }

    /// The same text conflict, met twice in git with rerere on and twice in Truce: the second time both replay the
    /// first answer onto a document whose other lines changed, to the same bytes; and the record's id is git's.
    @Test func theSecondConflictIsReplayedToTheBytesGitsRerereWrites() async throws {
        let first = (base: "a\nb\nc\nd\ne\n", ours: "a\nB-ours\nc\nd\ne\n", theirs: "a\nB-theirs\nc\nd\ne\n")
        let answer = "a\nB-by-hand\nc\nd\ne\n"
        let second = (base: "zero\na\nb\nc\nd\ne\n", ours: "zero\na\nB-ours\nc\nd\ne\n", theirs: "zero\na\nB-theirs\nc\nd\ne\n")

        // git: merge, answer by hand, commit; then the second merge, which rerere resolves.
        let repo = TemporaryDirectory("truce-rerere-git")
        _ = try Self.git(["init", "-q", "-b", "main"], in: repo.path)
        func commit(_ text: String, branch: String, from: String?) throws {
            if let from { _ = try Self.git(["checkout", "-q", "-B", branch, from], in: repo.path) }
            try Data(text.utf8).write(to: URL(fileURLWithPath: repo.file("f")))
            _ = try Self.git(["add", "f"], in: repo.path)
            _ = try Self.git(["commit", "-q", "-m", branch], in: repo.path)
        }
        try commit(first.base, branch: "main", from: nil)
        _ = try Self.git(["branch", "base1"], in: repo.path)
        try commit(first.ours, branch: "ours1", from: "base1")
        try commit(first.theirs, branch: "theirs1", from: "base1")
        _ = try Self.git(["checkout", "-q", "ours1"], in: repo.path)
        _ = try Self.git(["merge", "-q", "theirs1"], in: repo.path)
        let cache = try FileManager.default.contentsOfDirectory(atPath: repo.file(".git/rr-cache"))
        try #require(cache.count == 1, "git recorded \(cache)")
        try Data(answer.utf8).write(to: URL(fileURLWithPath: repo.file("f")))
        _ = try Self.git(["commit", "-q", "-a", "-m", "resolved"], in: repo.path)
        try commit(second.base, branch: "base2", from: "main")
        try commit(second.ours, branch: "ours2", from: "base2")
        try commit(second.theirs, branch: "theirs2", from: "base2")
        _ = try Self.git(["checkout", "-q", "ours2"], in: repo.path)
        let merged = try Self.git(["merge", "theirs2"], in: repo.path)
        #expect(merged.contains("Resolved 'f' using previous resolution"), "\(merged)")
        let gitBytes = try Data(contentsOf: URL(fileURLWithPath: repo.file("f")))

        // Truce: the same two conflicts in two documents; a person answers the first with a whole file.
        let test = try TestStore()
        try test.makeConflict("f.txt", base: .text(first.base), heads: [("laptop", .text(first.theirs)), ("phone", .text(first.ours))])
        _ = try await test.store.resolve("f.txt", to: .text(answer), device: "person")
        let records = try test.store.recordedAnswers()
        #expect(records.map(\.id) == cache, "the record's id is not git's rr-cache entry")
        #expect(records.first?.recordedBy == "person" && records.first?.document == "f.txt")
        try test.makeConflict("g.txt", base: .text(second.base), heads: [("laptop", .text(second.theirs)), ("phone", .text(second.ours))])
        let replayed = try await test.store.resolve("g.txt")
        guard case .resolved(let version, let resolver, .settled) = replayed else {
            Issue.record("not replayed: \(replayed)")
            return
        }
        #expect(resolver == DocumentStore.recordedAnswerResolverName)
        #expect(try test.store.contents(of: version) == gitBytes, "Truce replayed other bytes than git's rerere")
        #expect(try test.git("fsck", "--strict").isEmpty)
    }

    /// Answers given point by point come back for the same points in another document, as one commit on every replica.
    @Test func pointAnswersAreReplayedOnAnotherReplicaAsTheSameCommitUntilForgotten() async throws {
        let a = try TestStore(), b = try TestStore()
        let heads: [(String, Data?)] = [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))]
        try a.makeConflict("x.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        _ = try await a.store.resolve("x.md", answering: ["H1": .both], device: "person")
        // The same disagreement in another document, on both replicas.
        try a.makeConflict("y.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        _ = try await b.store.sync(with: a.path)
        let onA = try await a.store.resolve("y.md")
        let onB = try await b.store.resolve("y.md")
        #expect(onA.version != nil && onA.version?.id == onB.version?.id, "\(onA) \(onB)")
        #expect(try a.store.contents(of: "y.md") == .text("one\n2\nTWO\nthree\n"))
        #expect(try await b.store.recordedAnswers(for: "x.md").isEmpty, "x.md is settled: nothing applies to it")

        // Forgotten on one replica, the record is forgotten on the other after sync: the next such conflict needs a person.
        try a.makeConflict("z.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        let recorded = try await a.store.recordedAnswers(for: "z.md")
        #expect(recorded.count == 1)
        try await a.store.forgetRecordedAnswers(for: "z.md")
        _ = try await b.store.sync(with: a.path)
        #expect(try b.store.recordedAnswers().isEmpty)
        guard case .needsPerson = try await b.store.resolve("z.md") else {
            Issue.record("a forgotten answer was replayed")
            return
        }
    }

    /// A record whose sides are not exactly the conflict's, whatever its name says, answers nothing.
    @Test func aRecordForOtherSidesReplaysNothing() async throws {
        let test = try TestStore()
        let heads: [(String, Data?)] = [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))]
        try test.makeConflict("x.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        _ = try await test.store.resolve("x.md", answering: ["H1": .ours], device: "person")
        let record = try #require(try test.store.recordedAnswers().first)
        // A hostile replica's record: the right name, other sides.
        let key = RecordedAnswer.key(of: record.id)
        let forged = String(decoding: try #require(try test.store.contents(of: key)), as: UTF8.self).replacingOccurrences(of: "TWO", with: "TWX")
        try test.store.save(.text(forged), to: key, device: "hostile")
        try test.makeConflict("y.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        let before = snapshot(ofStore: test.path)
        guard case .needsPerson = try await test.store.resolve("y.md") else {
            Issue.record("a record for other sides was replayed")
            return
        }
        #expect(snapshot(ofStore: test.path) == before)
    }

    @Test func replayIsSwitchedOffInTheSyncedConfigAndOldRecordsAreCollected() async throws {
        let test = try TestStore()
        let heads: [(String, Data?)] = [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))]
        try test.makeConflict("x.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        _ = try await test.store.resolve("x.md", answering: ["H1": .theirs], device: "person")
        try test.store.save(.text("[rerere]\n\tenabled = false\n"), to: ".truce/config", device: "laptop")
        try test.makeConflict("y.md", base: .text("one\ntwo\nthree\n"), heads: heads)
        guard case .needsPerson = try await test.store.resolve("y.md") else {
            Issue.record("replayed with rerere.enabled = false")
            return
        }
        #expect(try test.store.collectRecordedAnswers().isEmpty, "a fresh record was collected")
        // A record is a document with a head: prune keeps it whatever the grace period.
        try await test.store.prune(expire: 0)
        #expect(try test.store.recordedAnswers().count == 1)
        let later = Date().addingTimeInterval(61 * 86_400)
        #expect(try test.store.collectRecordedAnswers(now: later).count == 1)
        #expect(try test.store.recordedAnswers().isEmpty)
        // Collected, it is a deletion; prune then drops the document and reclaims its space.
        let report = try await test.store.prune(expire: 0)
        #expect(report.droppedDocuments.contains { $0.isTruceRecord }, "\(report.droppedDocuments)")
    }

    /// Where `collectRecordedAnswers` reads its limits from: nowhere (git's defaults), the store's own config, or the
    /// synced `.truce/config`; each set one the other way round from the defaults.
    enum CollectionLimits: String, CaseIterable, Sendable {
        case defaults, storeConfig, syncedConfig
    }

    /// `rerere gc` gives each kind of record its own limit, as git does: a month old, an answer is kept by its 60 days
    /// (`gc.rerereResolved`) and a record without one (the person deleted the document) is collected by its 15
    /// (`gc.rerereUnresolved`); with the limits set to 10 and 40 days, the other way round.
    @Test(arguments: CollectionLimits.allCases)
    func oldRecordsAreCollectedEachByTheLimitOfItsKind(_ limits: CollectionLimits) async throws {
        let test = try TestStore()
        switch limits {
        case .defaults: break
        case .storeConfig:
            try test.setConfig("gc.rerereResolved", "10")
            try test.setConfig("gc.rerereUnresolved", "40")
        case .syncedConfig:
            try test.store.save(.text("[gc]\n\trerereResolved = 10\n\trerereUnresolved = 40\n"), to: ".truce/config", device: "laptop")
        }
        try test.makeConflict(
            "answered.md", base: .text("one\ntwo\nthree\n"), heads: [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))])
        _ = try await test.store.resolve("answered.md", content: .text("one\nTWO and 2\nthree\n"), device: "person")
        try test.makeConflict("deleted.md", base: .text("a\nb\nc\n"), heads: [("laptop", .text("a\nB\nc\n")), ("phone", .text("a\nbee\nc\n"))])
        _ = try await test.store.resolve("deleted.md", content: nil, device: "person")
        let records = try test.store.recordedAnswers()
        try #require(records.count == 2, "\(records.map(\.document))")
        let answered = try #require(records.first { $0.document == "answered.md" })
        let unanswered = try #require(records.first { $0.document == "deleted.md" })
        #expect(answered.scope == .document && answered.postimage == .text("one\nTWO and 2\nthree\n"))
        #expect(unanswered.scope == .document && unanswered.postimage == nil)

        let monthOld = max(answered.recordedAt, unanswered.recordedAt).addingTimeInterval(30 * 86_400)
        let (kept, collected) = limits == .defaults ? (answered, unanswered) : (unanswered, answered)
        #expect(try test.store.collectRecordedAnswers(now: monthOld, device: "gc") == [collected.id], "\(limits)")
        #expect(try test.store.recordedAnswers().map(\.id) == [kept.id], "\(limits)")
        #expect(try test.git("fsck", "--strict").isEmpty)
    }
}

/// What looking up recorded answers costs a call that settles many conflicts.
@Suite(.timeLimit(.minutes(10))) struct RecordedAnswerLookupTests {
    /// The same disagreement in twenty documents shares its ids: `resolveAll` reads each id once, not once per
    /// conflict (counted as listings of document heads, against the same call with replay switched off).
    @Test func resolveAllLooksUpEachRecordedAnswerIDOncePerCall() async throws {
        func listings(replaying: Bool) async throws -> Int {
            let test = try TestStore()
            let heads: [(String, Data?)] = [("laptop", .text("one\nTWO\nthree\n")), ("phone", .text("one\n2\nthree\n"))]
            for index in 0..<20 { try test.makeConflict(DocumentKey("doc\(index).md"), base: .text("one\ntwo\nthree\n"), heads: heads) }
            if !replaying { try test.store.save(.text("[rerere]\n\tenabled = false\n"), to: ".truce/config", device: "laptop") }
            let before = test.store.instrumentation.documentHeadListings
            let results = try await test.store.resolveAll(device: "resolver")
            #expect(results.count == 20)
            return test.store.instrumentation.documentHeadListings - before
        }
        let replaying = try await listings(replaying: true), switchedOff = try await listings(replaying: false)
        // Two ids (the whole image's and the one point's), each looked up once; the config document is one more listing.
        #expect(replaying - switchedOff <= 3, "\(replaying) listings replaying, \(switchedOff) without")
    }
}
