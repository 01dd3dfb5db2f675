/// Re-implements git's tree object entries, read (git-mktree, fsck.c fsck_tree): byte-compatible with git, listed in TruceGit/README.md.
///
/// The entries of a tree read from its raw bytes (`<mode> <name>\0<20-byte id>` each), without libgit2's object
/// cache or its parse into a tree object: a first push reads every tree it sends once, and never again.
package enum TreeEntries {
    /// An entry's object: its id, and whether it is a tree (mode 40000) or a blob (any other mode but a submodule's).
    package struct Entry: Equatable {
        package let id: ObjectID
        package let isTree: Bool
    }

    /// The entries of `raw` as trees and blobs, a submodule's commit (mode 160000) left out; nil when the bytes are not
    /// a tree's (a mode that is not octal, an empty name, an id cut short).
    package static func parse(_ raw: [UInt8]) -> [Entry]? {
        var entries: [Entry] = []
        var at = 0
        while at < raw.count {
            var mode = 0, digits = 0
            while at < raw.count, raw[at] != 0x20 {
                guard (0x30...0x37).contains(raw[at]), digits < 7 else { return nil }
                mode = mode << 3 | Int(raw[at] - 0x30)
                digits += 1
                at += 1
            }
            guard digits > 0, at < raw.count else { return nil }
            at += 1
            let nameStart = at
            while at < raw.count, raw[at] != 0 { at += 1 }
            guard at > nameStart, at + 21 <= raw.count else { return nil }
            let id = ObjectID(bytes: raw[(at + 1)..<(at + 21)])
            at += 21
            if mode == 0o160000 { continue }
            entries.append(Entry(id: id, isTree: mode == 0o40000))
        }
        return entries
    }
}
