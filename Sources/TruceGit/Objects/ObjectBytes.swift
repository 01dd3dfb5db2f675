import Foundation

/// An object as the object database stores it: its type (git's number: 1 commit, 2 tree, 3 blob) and its bytes.
package struct RawObject: Sendable, Equatable {
    package let type: UInt8
    package let bytes: [UInt8]
    package init(type: UInt8, bytes: [UInt8]) { (self.type, self.bytes) = (type, bytes) }

    package static let commitType: UInt8 = 1
    package static let treeType: UInt8 = 2
    package static let blobType: UInt8 = 3
}

/// Re-implements git's tree and commit object bytes, and tree entry order (git-mktree, git-commit-tree, fsck.c fsck_tree): byte-compatible with git, listed in TruceGit/README.md.
///
/// The bytes of the trees and commits Truce writes, as libgit2's tree builder and `git_commit_create_buffer` write them,
/// without asking a repository for the tree and parents first. `ObjectBytesTests` holds them to libgit2's own output.
package enum ObjectBytes {
    /// A tree of `entries`: each `<mode> <name>\0<20-byte id>`, ordered by name as git orders them (a tree's name as if
    /// it ended in `/`).
    package static func tree(_ entries: [TreeEntry]) -> [UInt8] {
        let sorted =
            entries.count < 2
            ? entries
            : entries.map { (entry: $0, order: Array($0.name.utf8) + ($0.isTree ? [0x2F] : [])) }.sorted {
                $0.order.lexicographicallyPrecedes($1.order)
            }.map(\.entry)
        var bytes: [UInt8] = []
        for entry in sorted {
            bytes += Array((entry.isTree ? "40000 " : "100644 ").utf8) + Array(entry.name.utf8) + [0] + entry.id.bytes
        }
        return bytes
    }

    /// A commit: `tree`, a `parent` line each, `author`, `committer`, a blank line and `message` as given.
    ///
    /// Names and addresses are trimmed of white space at both ends, and one holding `<` or `>`, or empty once trimmed,
    /// is refused, as `git_signature_new` refuses it.
    package static func commit(
        tree: ObjectID, parents: [ObjectID], author: Signature, committer: Signature, message: String
    ) throws(GitError) -> [UInt8] {
        var bytes = Array("tree \(tree.hex)\n".utf8)
        for parent in parents { bytes += Array("parent \(parent.hex)\n".utf8) }
        bytes += try signatureLine("author", author)
        bytes += try signatureLine("committer", committer)
        bytes.append(0x0A)
        bytes += Array(message.utf8)
        return bytes
    }

    /// `header name <email> seconds ±hhmm\n`, as libgit2 writes a signature.
    static func signatureLine(_ header: String, _ signature: Signature) throws(GitError) -> [UInt8] {
        let name = trimmed(signature.name), email = trimmed(signature.email)
        let refuse = { (reason: String) in
            GitError(operation: "make signature for '\(signature.name)'", code: -1, errorClass: 0, message: reason)
        }
        if (name + email).contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") }) {
            throw refuse("failed to parse signature - Neither `name` nor `email` should contain angle brackets chars.")
        }
        if name.isEmpty || email.isEmpty { throw refuse("failed to parse signature - Signature cannot have an empty name or email") }
        let offset = abs(Int(signature.offsetMinutes))
        // libgit2 prints the seconds as an unsigned 32-bit number (`Signature.representableDates` keeps dates in range).
        let seconds = UInt32(truncatingIfNeeded: signature.time)
        var line = Array(header.utf8)
        line.reserveCapacity(header.utf8.count + name.count + email.count + 32)
        line.append(0x20)
        line += name
        line += [0x20, UInt8(ascii: "<")]
        line += email
        line += [UInt8(ascii: ">"), 0x20]
        line += Array(String(seconds).utf8)
        line += [0x20, signature.offsetMinutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")]
        // The zone as four digits, hours then minutes, each zero-padded.
        for digit in [offset / 600 % 10, offset / 60 % 10, offset % 60 / 10, offset % 10] { line.append(UInt8(ascii: "0") + UInt8(digit)) }
        line.append(0x0A)
        return line
    }

    /// `text`'s bytes without the white space (`isspace`) at either end.
    private static func trimmed(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return Array(bytes[first...last])
    }
}
