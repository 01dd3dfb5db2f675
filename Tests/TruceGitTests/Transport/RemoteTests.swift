import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// A fetch over the network names the tips of the fetching repository's references as its "have" lines, and only
/// them, when the server holds them: what upload-pack logs it read is the oracle.
@Suite(.timeLimit(.minutes(10))) struct RemoteTests {
    typealias Fixture = PackWriterTests.Fixture

    enum Transport: String, CaseIterable { case git, http }

    /// A hub behind `transport` whose upload-pack logs every pkt-line it reads to `trace`.
    final class Hub {
        let trace: String
        let url: String
        private let server: AnyObject
        private let directory = TemporaryDirectory("truce-remote")

        init(_ transport: Transport) throws {
            trace = directory.file("packets.log")
            switch transport {
            case .git:
                let daemon = try GitDaemon(tracingPacketsTo: trace)
                url = try daemon.makeHub()
                server = daemon
            case .http:
                let http = try HTTPGitServer(tls: false, requiringPassword: false, tracingPacketsTo: trace)
                url = try http.makeHub()
                server = http
            }
        }

        /// The commits named by the "have" lines upload-pack read since the log was last cleared, in order.
        func haves() throws -> [String] {
            let log = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
            return log.split(separator: "\n").compactMap { line in
                guard let range = line.range(of: "upload-pack< have ") else { return nil }
                return String(line[range.upperBound...].prefix(40))
            }
        }

        func clearLog() throws { try Data().write(to: URL(fileURLWithPath: trace)) }
    }

    /// `count` commits in a chain, each with a blob of its own, the last returned first.
    static func chain(_ count: Int, named name: String, in repository: Repository, after parent: ObjectID? = nil) throws -> ObjectID {
        var tip = parent
        for index in 0..<count {
            let blob = try repository.writeBlob(.text("\(name) \(index)\n"))
            let tree = try repository.writeTree([TreeEntry(name: name, id: blob, isTree: false)])
            let base = PackWriterTests.signature
            let signature = Signature(name: base.name, email: base.email, time: base.time + Int64(index), offsetMinutes: base.offsetMinutes)
            tip = try repository.writeCommit(
                tree: tree, parents: tip.map { [$0] } ?? [], author: signature, committer: signature, message: "\(name) \(index)\n")
        }
        return try #require(tip)
    }

    /// Points `references` of `repository` at their commits and pushes them, forced, to `url`.
    static func push(_ references: [String: ObjectID], from repository: Repository, to url: String) throws {
        for (name, target) in references.sorted(by: { $0.key < $1.key }) {
            try repository.updateReference(name, to: target, expecting: try repository.reference(name), message: "test: push")
        }
        try repository.push(refspecs: references.keys.sorted().map { "+\($0):\($0)" }, to: url)
    }

    /// Fetches what `reader` lacks of the hub's refs and points its own references at them, as a sync leaves a store.
    static func catchUp(_ reader: Repository, from url: String) throws -> [(name: String, target: ObjectID)] {
        let advertised = try reader.fetch(
            from: url, refsMatching: "refs/*",
            wanting: { advertised throws(GitError) in
                var wanted: [String] = []
                for reference in advertised where try !reader.containsCommit(reference.target) { wanted.append(reference.name) }
                return wanted
            })
        for reference in advertised {
            let current = try reader.reference(reference.name)
            try reader.updateReference(reference.name, to: reference.target, expecting: current, message: "test: caught up")
        }
        return advertised
    }

    @Test(arguments: Transport.allCases) func oneNewCommitIsNegotiatedFromTheTipsAloneAndArrives(_ transport: Transport) throws {
        let hub = try Hub(transport)
        let writer = try Fixture(), reader = try Fixture()
        let source = try Repository.openBare(at: writer.path), target = try Repository.openBare(at: reader.path)
        // Two histories longer than libgit2's round of 20, so its own walk would name old commits of both.
        let a = try Self.chain(30, named: "a", in: source), b = try Self.chain(30, named: "b", in: source)
        try Self.push(["refs/truce/a": a, "refs/truce/b": b], from: source, to: hub.url)
        #expect(try Self.catchUp(target, from: hub.url).count == 2)

        let next = try Self.chain(1, named: "a", in: source, after: a)
        try Self.push(["refs/truce/a": next], from: source, to: hub.url)
        try hub.clearLog()
        let advertised = try Self.catchUp(target, from: hub.url)

        #expect(Set(advertised.map(\.target)) == [next, b])
        #expect(try target.containsCommit(next))
        // The tips the reader's references held, and nothing older: libgit2 alone names 20 commits of their histories.
        let haves = try hub.haves()
        #expect(!haves.isEmpty && Set(haves) == [a.hex, b.hex], "\(haves)")
        #expect(try reader.fsckFindings().isEmpty)
    }

    /// A push that names a ref's expected value moves it only from there, as `--force-with-lease` does: a ref that moved
    /// on the remote since (or exists, where it should not) fails the push with a concurrent modification, and the
    /// remote keeps what it had; the ref read again moves.
    @Test(arguments: Transport.allCases) func aPushMovesAnExpectedRefOnlyFromTheValueExpected(_ transport: Transport) throws {
        let hub = try Hub(transport)
        let writer = try Fixture(), other = try Fixture()
        let source = try Repository.openBare(at: writer.path)
        let a = try Self.chain(2, named: "a", in: source)
        try Self.push(["refs/truce/hub": a], from: source, to: hub.url)
        // Another writer moves it meanwhile.
        let elsewhere = try Repository.openBare(at: other.path)
        let theirs = try Self.chain(1, named: "theirs", in: elsewhere)
        try Self.push(["refs/truce/hub": theirs], from: elsewhere, to: hub.url)
        let ours = try Self.chain(1, named: "a", in: source, after: a)
        try source.updateReference("refs/truce/hub", to: ours, expecting: a, message: "test: ours")
        for expected in [a, nil] as [ObjectID?] {
            #expect {
                try source.push(refspecs: ["+refs/truce/hub:refs/truce/hub"], to: hub.url, expecting: ["refs/truce/hub": expected])
            } throws: { error in
                (error as? GitError)?.isConcurrentModification == true
            }
        }
        let advertised = try source.fetch(from: hub.url, refsMatching: "refs/*", wanting: { _ in [] })
        #expect(advertised.map(\.target) == [theirs])
        try source.push(refspecs: ["+refs/truce/hub:refs/truce/hub"], to: hub.url, expecting: ["refs/truce/hub": theirs])
        #expect(try source.fetch(from: hub.url, refsMatching: "refs/*", wanting: { _ in [] }).map(\.target) == [ours])
    }

    @Test(arguments: Transport.allCases) func tipsTheServerLacksLeaveLibgit2ToNegotiateOnDownTheHistories(_ transport: Transport) throws {
        let hub = try Hub(transport)
        let writer = try Fixture(), reader = try Fixture()
        let source = try Repository.openBare(at: writer.path), target = try Repository.openBare(at: reader.path)
        let a = try Self.chain(30, named: "a", in: source)
        try Self.push(["refs/truce/a": a], from: source, to: hub.url)
        #expect(try Self.catchUp(target, from: hub.url).count == 1)
        // The reader moves on alone, 25 commits the hub never sees: its tip tells the hub nothing.
        let local = try Self.chain(25, named: "local", in: target, after: a)
        try target.updateReference("refs/truce/a", to: local, expecting: a, message: "test: local work")

        let next = try Self.chain(1, named: "a", in: source, after: a)
        try Self.push(["refs/truce/a": next], from: source, to: hub.url)
        try hub.clearLog()
        _ = try target.fetch(from: hub.url, refsMatching: "refs/*", wanting: { $0.map(\.name) })

        #expect(try target.containsCommit(next))
        // The unknown tip, then libgit2's next round reaching the history the hub has.
        let haves = try hub.haves()
        #expect(haves.first == local.hex && haves.contains(a.hex), "\(haves)")
        #expect(try reader.fsckFindings().isEmpty)
    }
}
