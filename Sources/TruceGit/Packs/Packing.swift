internal import CGitShim
internal import CLibgit2
import Foundation

/// A loose object file or a pack in the object database, with its modification time.
package struct ObjectFile {
    package let path: String
    /// The object id, for a loose object.
    package let id: ObjectID?
    package let modified: Date
    package let size: Int
}

extension ObjectFile {
    /// The file at `path` as it is now; nil when it is gone.
    init?(path: String, id: ObjectID? = nil) {
        guard let status = DurableFiles.status(path) else { return nil }
        self.init(path: path, id: id, modified: status.modified, size: status.size)
    }
}

extension Repository {
    /// Every object reachable from `tips`: commits, their trees and blobs, and annotated tags with what they name.
    package func reachableObjects(from tips: Set<ObjectID>) throws(GitError) -> Set<ObjectID> {
        // One set, of commits seen and objects marked alike: a walk's own set of seen commits held every commit twice.
        var reachable = Set<ObjectID>()
        var pending = Array(tips)
        while let id = pending.popLast() {
            guard reachable.insert(id).inserted else { continue }
            var oid = id.raw
            var commit: OpaquePointer?
            let code = git_commit_lookup(&commit, handle, &oid)
            // A tip is read as a commit, and its type asked only when it is not one (a ref may name a tree or a blob):
            // a type lookup for every tip first cost two thirds of marking a million documents.
            if code == GIT_ENOTFOUND.rawValue, tips.contains(id), case var type = try objectType(id), type != GIT_OBJECT_COMMIT {
                reachable.remove(id)
                // An annotated tag keeps what it names, as git's marking does: a commit goes on to be walked.
                var named = id
                while type == GIT_OBJECT_TAG {
                    reachable.insert(named)
                    named = try tagTarget(named)
                    type = try objectType(named)
                }
                switch type {
                case GIT_OBJECT_COMMIT: pending.append(named)
                case GIT_OBJECT_TREE: try insertTree(named, into: &reachable)
                default: reachable.insert(named)
                }
                continue
            }
            try check(code, "read commit \(id)")
            defer { git_commit_free(commit) }
            try insertTree(ObjectID(git_commit_tree_id(commit).pointee), into: &reachable)
            for index in 0..<git_commit_parentcount(commit) {
                let parent = ObjectID(git_commit_parent_id(commit, index).pointee)
                if !reachable.contains(parent) { pending.append(parent) }
            }
        }
        return reachable
    }

    /// Writes one pack holding exactly `objects` into `objects/pack` and returns its name (`pack-<hash>`).
    ///
    /// libgit2 fsyncs the pack and its index when fsync is on (it is, for every store).
    package func writePack(of objects: Set<ObjectID>, progress: (Int, Int) -> Void) throws(GitError) -> String {
        var builder: OpaquePointer?
        try check(git_packbuilder_new(&builder, handle), "start pack")
        defer { git_packbuilder_free(builder) }
        git_packbuilder_set_threads(builder, 0)  // one delta-search thread per core
        var done = 0
        for id in objects.sorted() {
            var oid = id.raw
            try check(git_packbuilder_insert(builder, &oid, nil), "add \(id) to pack")
            done += 1
            if done % 1000 == 0 { progress(done, objects.count) }
        }
        try check(git_packbuilder_write(builder, nil, 0, nil, nil), "write pack")
        return "pack-" + String(cString: git_packbuilder_name(builder))
    }

    /// The loose objects, packs, and temporary files libgit2 or git left in the object database.
    package func objectFiles() -> (loose: [ObjectFile], packs: [ObjectFile], temporary: [ObjectFile]) {
        let objects = gitDirectory + "objects/"
        var loose: [ObjectFile] = [], temporary: [ObjectFile] = []
        Self.forEachFileInLooseDirectories(of: objects) { path, id in
            if let file = ObjectFile(path: path, id: id) {
                if id == nil { temporary.append(file) } else { loose.append(file) }
            }
        }
        // libgit2 writes a loose object to objects/tmp_object_git2_* first; a writer killed then leaves it there.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: objects)) ?? [] where name.hasPrefix("tmp_") {
            ObjectFile(path: objects + name).map { temporary.append($0) }
        }
        let (packs, leftovers) = packFiles()
        return (loose, packs, temporary + leftovers)
    }

    /// The ids of the loose objects in `objects` (an object directory, ending in `/`): one listing, no file read.
    package static func looseObjectIDs(in objects: String) -> Set<ObjectID> {
        var ids = Set<ObjectID>()
        forEachFileInLooseDirectories(of: objects) { _, id in if let id { ids.insert(id) } }
        return ids
    }

    /// Calls `body` with each file in the two-digit folders of `objects` (ending in `/`) and the object id its name
    /// makes, nil for a file that is no loose object (a temporary one).
    private static func forEachFileInLooseDirectories(of objects: String, _ body: (_ path: String, _ id: ObjectID?) -> Void) {
        let manager = FileManager.default
        for directory in (try? manager.contentsOfDirectory(atPath: objects)) ?? [] where directory.utf8.count == 2 {
            for name in (try? manager.contentsOfDirectory(atPath: objects + directory)) ?? [] {
                body(objects + directory + "/" + name, ObjectID(hex: directory + name))
            }
        }
    }

    /// The packs in `objects/pack`, and the files there that are no pack's: a killed indexer's, and the index and
    /// companions of a pack a killed prune removed before them. One directory read.
    package func packFiles() -> (packs: [ObjectFile], temporary: [ObjectFile]) {
        let directory = gitDirectory + "objects/pack/"
        var packs: [ObjectFile] = [], temporary: [ObjectFile] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let packNames = Set(names.filter { $0.hasPrefix("pack-") && $0.hasSuffix(".pack") })
        for name in names {
            let isPack = packNames.contains(name)
            // A pack's index and companions go with their pack (`SyncTests.aPackIndexLeftWithoutItsPackHoldsNothing`).
            if !isPack, name.hasPrefix("pack-"), packNames.contains(name.prefix { $0 != "." } + ".pack") { continue }
            guard let file = ObjectFile(path: directory + name) else { continue }
            if isPack { packs.append(file) } else { temporary.append(file) }
        }
        return (packs, temporary)
    }

    /// The ids a pack's index lists (`pack-<hash>.idx` beside `pack`), nil when it is missing or not version 2.
    package func objectIDs(inPack pack: String) -> Set<ObjectID>? {
        PackIndex.objectIDs(ofPack: pack).map(Set.init)
    }

    private func objectType(_ id: ObjectID) throws(GitError) -> git_object_t {
        var oid = id.raw
        var object: OpaquePointer?
        try check(git_object_lookup(&object, handle, &oid, GIT_OBJECT_ANY), "read object \(id)")
        defer { git_object_free(object) }
        return git_object_type(object)
    }

    private func tagTarget(_ id: ObjectID) throws(GitError) -> ObjectID {
        var oid = id.raw
        var tag: OpaquePointer?
        try check(git_tag_lookup(&tag, handle, &oid), "read tag \(id)")
        defer { git_tag_free(tag) }
        return ObjectID(git_tag_target_id(tag).pointee)
    }

    /// Inserts the tree `id` and all it holds. A tree entry says what it names: blobs go in unread, and only trees are
    /// read (marking a store reads each tree once and no blob).
    private func insertTree(_ id: ObjectID, into reachable: inout Set<ObjectID>) throws(GitError) {
        try walkTree(id, entering: { reachable.insert($0).inserted }, blob: { reachable.insert($0) })
    }

    /// Goes through tree `id` depth first: `entering` hears each tree (this one first) and says whether to read it
    /// and go below; `blob` hears each blob a read tree names. No blob is read, and a submodule's commit, which no
    /// store holds, is passed over.
    func walkTree(_ id: ObjectID, readingFrom entries: PackEntries? = nil, entering: (ObjectID) -> Bool, blob: (ObjectID) -> Void)
        throws(GitError)
    {
        guard entering(id) else { return }
        for entry in try treeEntries(of: id, readingFrom: entries) {
            if entry.isTree { try walkTree(entry.id, readingFrom: entries, entering: entering, blob: blob) } else { blob(entry.id) }
        }
    }

    /// The trees and blobs tree `id` names, a submodule's commit passed over: read raw from `entries` first, which
    /// remember where for the copy (libgit2's parse kept each tree in its cache), else through libgit2.
    func treeEntries(of id: ObjectID, readingFrom entries: PackEntries?) throws(GitError) -> [TreeEntries.Entry] {
        if let entries, let raw = try rawObject(id, ofType: GIT_OBJECT_TREE, missingIsNil: true, from: entries),
            let parsed = TreeEntries.parse(raw)
        {
            return parsed
        }
        var oid = id.raw
        var tree: OpaquePointer?
        try check(git_tree_lookup(&tree, handle, &oid), "read tree \(id)")
        defer { git_tree_free(tree) }
        return (0..<git_tree_entrycount(tree)).compactMap { index in
            guard let entry = git_tree_entry_byindex(tree, index) else { return nil }
            let type = git_tree_entry_type(entry)
            guard type == GIT_OBJECT_TREE || type == GIT_OBJECT_BLOB else { return nil }
            return TreeEntries.Entry(id: ObjectID(git_tree_entry_id(entry).pointee), isTree: type == GIT_OBJECT_TREE)
        }
    }
}

/// Re-implements git's pack index (version 2) object list, read (gitformat-pack): byte-compatible with git, listed in TruceGit/README.md.
///
/// A pack's `.idx` file (version 2), read for the ids of the objects its pack holds.
package enum PackIndex {
    /// The ids the index beside `pack` (`pack-<hash>.idx` for `pack-<hash>.pack`) lists, in its order; nil when `pack`
    /// is no `.pack` path or its index is missing or not version 2.
    package static func objectIDs(ofPack pack: String) -> [ObjectID]? {
        guard pack.hasSuffix(".pack") else { return nil }
        return objectIDs(atPath: String(pack.dropLast(".pack".count)) + ".idx")
    }

    /// The object ids an index lists; nil when the file is missing or not a version 2 index.
    package static func objectIDs(atPath path: String) -> [ObjectID]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        // Magic "\377tOc", version 2, then 256 cumulative counts; the last is the number of objects.
        guard bytes.count >= 8 + 256 * 4, bytes[0..<8] == [0xFF, 0x74, 0x4F, 0x63, 0, 0, 0, 2] else { return nil }
        let countOffset = 8 + 255 * 4
        let count = bytes[countOffset..<(countOffset + 4)].reduce(0) { $0 << 8 | Int($1) }
        let start = 8 + 256 * 4
        guard bytes.count >= start + count * 20 else { return nil }
        return (0..<count).map { ObjectID(bytes: bytes[(start + $0 * 20)..<(start + $0 * 20 + 20)]) }
    }
}
