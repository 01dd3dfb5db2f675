import Foundation
import TestSupport
import Testing
import Truce

@Suite(.timeLimit(.minutes(10))) struct ResolveAllTests {
    static let base = "one\ntwo\nthree\nfour\nfive\nsix\n"

    @Test func everyConflictIsSettledTogetherExceptThoseThatNeedAPerson() async throws {
        let test = try TestStore()
        var made: [DocumentKey: MadeConflict] = [:]
        for index in 0..<12 {
            let key = try DocumentKey("docs/\(index).md")
            let theirs = index == 5 ? Self.base.replacingOccurrences(of: "one", with: "ONE?") : Self.base.replacingOccurrences(of: "six", with: "SIX")
            made[key] = try test.makeConflict(
                key, base: .text(Self.base),
                heads: [
                    ("laptop", .text(Self.base.replacingOccurrences(of: "one", with: "ONE"))), ("phone", .text(theirs)),
                ])
        }
        let events = test.store.events
        let results = try await test.store.resolveAll(registry: .standard, device: "bench")
        #expect(results.count == 12)
        for (key, conflict) in made {
            if key == "docs/5.md" {
                guard case .needsPerson(let points, "three-way", _) = results[key] else {
                    Issue.record("\(String(describing: results[key]))")
                    continue
                }
                #expect(points.count == 1)
                #expect(try test.store.state(of: key) == .inConflict)
                continue
            }
            guard case .resolved(let version, "three-way", .settled) = results[key] else {
                Issue.record("\(String(describing: results[key]))")
                continue
            }
            #expect(version.parents == [conflict.current.id, conflict.heads[0].id])
            #expect(
                try test.store.contents(of: version)
                    == .text(Self.base.replacingOccurrences(of: "one", with: "ONE").replacingOccurrences(of: "six", with: "SIX")))
        }
        #expect(try test.store.documentsInConflict().map(\.key) == ["docs/5.md"])
        #expect(try test.store.changes().changes.filter { $0.kind == .resolution }.count == 11)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
        let resolved = try await firstElements(11, of: events, where: { $0.wasResolved }, waitingFor: "eleven resolutions")
        #expect(Set(resolved.map(\.key)) == Set(made.keys).subtracting(["docs/5.md"]))
    }

    @Test func manyResolutionsAreOneJournalEntryThatKeepsWhoRanThem() async throws {
        let test = try TestStore()
        for index in 0..<20 {
            try test.makeConflict(
                DocumentKey("docs/\(index).md"), base: .text(Self.base),
                heads: [
                    ("laptop", .text(Self.base.replacingOccurrences(of: "one", with: "ONE"))),
                    ("phone", .text(Self.base.replacingOccurrences(of: "six", with: "SIX"))),
                ])
        }
        let results = try await test.store.resolveAll(registry: .standard, device: "tablet")
        let resolutions = results.values.compactMap { result -> Version? in if case .resolved(let version, _, _) = result { version } else { nil } }
        #expect(resolutions.count == 20)
        #expect(try test.git("log", "-1", "--format=%s", "refs/truce/journal") == "journal 20 changes\n")
        let authors = try test.store.resolutionAuthors(of: resolutions)
        #expect(authors.count == 20)
        #expect(authors.values.allSatisfy { $0 == "tablet" })
        // Prune journals what a crash kept out of the journal: with every line of the batch read, nothing.
        let before = try test.git("rev-parse", "refs/truce/journal")
        _ = try await test.store.prune(expire: 0)
        #expect(try test.git("rev-parse", "refs/truce/journal") == before)
        #expect(try test.git("fsck", "--strict", "--no-dangling").isEmpty)
    }

    @Test func theCommandLineSettlesEveryDocumentAndSaysWhichNeedAPerson() async throws {
        let test = try TestStore()
        try test.makeConflict(
            "a.md", base: .text(Self.base), heads: [("laptop", .text("ONE\n" + Self.base.dropFirst(4))), ("phone", .text(Self.base + "seven\n"))])
        try test.makeConflict("b.md", base: .text(Self.base), heads: [("laptop", .text("x\n")), ("phone", .text("y\n"))])
        let dryRun = try truce(["resolve", "--all", "--dry-run"], store: test.path)
        #expect(dryRun.status == 1)
        #expect(dryRun.output.contains("dry run: three-way would resolve a.md"))
        let result = try truce(["resolve", "--all"], store: test.path)
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("resolved a.md with three-way: "))
        #expect(lines[1] == "b.md: needs a person (1 conflict points); see 'truce conflicts b.md'")
        #expect(try truce(["resolve", "--all", "a.md"], store: test.path).status == 2)
    }
}
