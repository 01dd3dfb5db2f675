import CLibgit2
import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The trees and commits Truce formats itself (`ObjectBytes`), against libgit2's own formatting and `git mktree`.
@Suite(.timeLimit(.minutes(10))) struct ObjectBytesTests {
    static let someone = Signature(name: "laptop", email: "laptop@truce", time: 1_764_000_000, offsetMinutes: 0)

    /// Signatures libgit2 takes, each formatted as libgit2 formats it: trimmed, every zone, the dates at the edges.
    static let signatures: [Signature] = [
        someone,
        Signature(name: "  Ada Lovelace \t", email: " ada@example.org ", time: 0, offsetMinutes: 0),
        Signature(name: "café 電話", email: "phone@truce", time: Int64(UInt32.max), offsetMinutes: 330),
        Signature(name: "x", email: "y", time: 1, offsetMinutes: -480),
        Signature(name: "minus", email: "m@m", time: 86_400, offsetMinutes: -30),
    ]

    static let messages = ["Save notes/todo.md\n\nDocument: notes/todo.md\nDevice: laptop\n", "", "no newline", "a\n\n\nb\n\n"]

    @Test func aCommitsBytesAreLibgit2s() throws {
        let directory = TemporaryDirectory("object-bytes")
        let repository = try Repository.createBare(at: directory.file("repo"))
        let tree = try repository.writeTree([])
        let parent = try repository.writeCommit(tree: tree, parents: [], author: Self.someone, committer: Self.someone, message: "p\n")
        let other = try repository.writeCommit(tree: tree, parents: [parent], author: Self.someone, committer: Self.someone, message: "o\n")
        for author in Self.signatures {
            for (index, message) in Self.messages.enumerated() {
                let parents = Array([parent, other].prefix(index % 3))
                let committer = Self.signatures[(index + 1) % Self.signatures.count]
                var buffer = try repository.commitBuffer(tree: tree, parents: parents, author: author, committer: committer, message: message)
                defer { git_buf_dispose(&buffer) }
                let libgit2 = Array(UnsafeRawBufferPointer(start: buffer.ptr, count: buffer.size))
                let ours = try ObjectBytes.commit(tree: tree, parents: parents, author: author, committer: committer, message: message)
                #expect(String(decoding: ours, as: UTF8.self) == String(decoding: libgit2, as: UTF8.self))
                #expect(ours == libgit2)
            }
        }
    }

    /// A commit written without libgit2 looking its parents up is the one libgit2 writes: the same id, which git reads.
    @Test func aCommitOfKnownParentsIsTheOneLibgit2Writes() throws {
        let directory = TemporaryDirectory("object-bytes")
        let repository = try Repository.createBare(at: directory.file("repo"))
        let tree = try repository.writeTree([])
        var parents: [ObjectID] = []
        for index in 0..<5 {
            let message = "head \(index)\n"
            parents.append(try repository.writeCommit(tree: tree, parents: [], author: Self.someone, committer: Self.someone, message: message))
        }
        let signature = Self.signatures[2]
        for message in Self.messages {
            let known = try repository.writeCommit(tree: tree, knownParents: parents, author: signature, committer: Self.someone, message: message)
            let looked = try repository.writeCommit(tree: tree, parents: parents, author: signature, committer: Self.someone, message: message)
            #expect(known == looked)
        }
        #expect(try git(["-C", directory.file("repo"), "fsck", "--strict", "--no-dangling"]).status == 0)
    }

    @Test func aSignatureLibgit2RefusesIsRefused() throws {
        let tree = ObjectID.zero
        for (name, email) in [("a <b>", "c"), ("a", "c>d"), ("   ", "e"), ("n", "\t")] {
            let signature = Signature(name: name, email: email, time: 0, offsetMinutes: 0)
            #expect(throws: GitError.self) { try ObjectBytes.commit(tree: tree, parents: [], author: signature, committer: signature, message: "") }
            var raw: UnsafeMutablePointer<git_signature>?
            #expect(git_signature_new(&raw, name, email, 0, 0) != 0, "libgit2 refuses \(name) <\(email)> too")
            git_signature_free(raw)
        }
    }

    @Test func aTreesIdIsTheOneGitMktreeGives() throws {
        let directory = TemporaryDirectory("object-bytes")
        let path = directory.file("repo")
        _ = try Repository.createBare(at: path)
        let blob = ObjectID.blobHash(of: Array("x\n".utf8))
        let sub = ObjectID(hex: "4b825dc642cb6eb9a060e54bf8d69288fbee4904")!
        // Names that sort differently as trees ("a" sorts as "a/", after "a.txt" and "a-b") and as bytes.
        let entries = [
            TreeEntry(name: "a", id: sub, isTree: true), TreeEntry(name: "a.txt", id: blob, isTree: false),
            TreeEntry(name: "a-b", id: blob, isTree: false), TreeEntry(name: "B", id: blob, isTree: false),
            TreeEntry(name: "é", id: blob, isTree: false),
        ]
        let listing = entries.map { entry in "\(entry.isTree ? "040000 tree" : "100644 blob") \(entry.id.hex)\t\(entry.name)\n" }.joined()
        let mktree = try git(["-C", path, "mktree", "--missing"], input: Data(listing.utf8))
        #expect(mktree.status == 0, "\(mktree.errorOutput)")
        let staging = ObjectStaging()
        #expect(staging.writeTree(entries).hex + "\n" == mktree.output)
    }
}
