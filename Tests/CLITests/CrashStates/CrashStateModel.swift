import Foundation
import TestSupport

/// The states a power cut could leave a directory in, rebuilt from a trace of the calls a process made on it.
///
/// The rules are ext4's in its default ordered mode, taken at their
/// weakest (as ALICE's abstract persistence model takes them, and as file
/// systems without one journal behave):
///
/// - **Data** a write put in a file is durable once the file is fsynced (or
///   fdatasynced); until then any prefix of the writes since the last sync
///   may be on disk, the last of them possibly torn halfway. Ordered mode
///   never shows garbage: a file's size only covers data that was written.
/// - **Names** (a new file or directory, a rename, a link, an unlink) are
///   durable once the directory holding them is fsynced. Until then the
///   changes of one directory survive as a prefix, in the order they were
///   made, independently of other directories' (a rename belongs to the
///   directory it moves into). A name in a directory whose own name was lost
///   is lost with it.
/// - `sync()` makes everything durable.
///
/// This is stricter than ext4 itself, whose journal commits every name
/// change up to an fsync at once: code that is safe here is safe there.
struct CrashStateModel {
    /// What a file holds: on disk for sure, the changes since its last sync, and what a reader sees now.
    struct File {
        var durable: [UInt8]
        var pending: [Change] = []
        var current: [UInt8]

        enum Change {
            case write(offset: Int, bytes: [UInt8])
            case resize(Int)
            case extend(to: Int)
        }

        init(_ bytes: [UInt8]) { (durable, current) = (bytes, bytes) }

        static func apply(_ change: Change, to bytes: inout [UInt8], torn: Bool = false) {
            switch change {
            case .write(let offset, var data):
                if torn { data = Array(data.prefix(data.count / 2)) }
                if bytes.count < offset + data.count { bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count) }
                bytes.replaceSubrange(offset..<offset + data.count, with: data)
            case .resize(let size):
                if size < bytes.count { bytes.removeSubrange(size...) } else { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
            case .extend(let size):
                if size > bytes.count { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
            }
        }
    }

    /// The names of a directory tree: files (path to file number) and directories, relative to the traced directory.
    struct Names: Hashable {
        var files: [String: Int] = [:]
        var directories: Set<String> = []

        mutating func apply(_ change: NameChange.Kind) {
            switch change {
            case .create(let path, let file), .link(let path, let file):
                files[path] = file
            case .makeDirectory(let path):
                directories.insert(path)
            case .removeDirectory(let path):
                directories.remove(path)
            case .unlink(let path):
                files[path] = nil
            case .rename(let from, let to):
                if let file = files[from] {
                    files[from] = nil
                    files[to] = file
                } else if directories.contains(from) {
                    // A directory moves with everything below it.
                    directories.remove(from)
                    directories.insert(to)
                    for moved in directories where moved.hasPrefix(from + "/") {
                        directories.remove(moved)
                        directories.insert(to + moved.dropFirst(from.count))
                    }
                    for (path, file) in files where path.hasPrefix(from + "/") {
                        files[path] = nil
                        files[to + path.dropFirst(from.count)] = file
                    }
                }
            }
        }

        /// True when every directory above `path` exists (the traced directory always does).
        func isReachable(_ path: String) -> Bool {
            var parent = CrashStateModel.directory(of: path)
            while parent != "." {
                guard directories.contains(parent) else { return false }
                parent = CrashStateModel.directory(of: parent)
            }
            return true
        }
    }

    /// A name change not yet durable, and the directory whose fsync makes it so.
    struct NameChange {
        enum Kind {
            case create(String, Int)
            case link(String, Int)
            case makeDirectory(String)
            case removeDirectory(String)
            case unlink(String)
            case rename(String, String)
        }
        let sequence: Int
        let directory: String
        let kind: Kind
    }

    private(set) var contents: [File] = []
    /// The names a reader sees now, and the ones on disk for sure.
    private(set) var current = Names()
    private(set) var durable = Names()
    private(set) var pendingNames: [NameChange] = []
    private var fileOfInode: [UInt64: Int] = [:]
    /// Calls the model could not place: an inode it never saw created. The trace then misses a call.
    private(set) var unplaced: [String] = []

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }

    /// The model of `directory` as it is now, everything in it durable.
    init(snapshotOf directory: String) throws {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            var status = stat()
            guard lstat(directory + "/" + relative, &status) == 0 else { continue }
            if (status.st_mode & S_IFMT) == S_IFDIR {
                current.directories.insert(relative)
            } else if (status.st_mode & S_IFMT) == S_IFREG {
                let bytes = [UInt8](FileManager.default.contents(atPath: directory + "/" + relative) ?? Data())
                let file = contents.count
                contents.append(File(bytes))
                fileOfInode[UInt64(status.st_ino)] = file
                current.files[relative] = file
            }
        }
        durable = current
    }

    /// Applies one traced call.
    mutating func apply(_ call: TracedCall) {
        let sequence = Int(call.sequence)
        func file(_ inode: UInt64) -> Int? {
            if let file = fileOfInode[inode] { return file }
            unplaced.append("call \(call.sequence) (\(call.kind)) on inode \(inode) the trace never created")
            return nil
        }
        func change(_ file: Int, _ change: File.Change) {
            File.apply(change, to: &contents[file].current)
            contents[file].pending.append(change)
        }
        func name(_ directory: String, _ kind: NameChange.Kind) {
            current.apply(kind)
            pendingNames.append(NameChange(sequence: sequence, directory: directory, kind: kind))
        }
        switch call.kind {
        case .create:
            let file = contents.count
            contents.append(File([]))
            fileOfInode[call.inode] = file
            name(Self.directory(of: call.path), .create(call.path, file))
        case .truncate:
            if let file = file(call.inode) { change(file, .resize(Int(call.length))) }
        case .write:
            if let file = file(call.inode) { change(file, .write(offset: Int(call.offset), bytes: call.data)) }
        case .extend:
            if let file = file(call.inode) { change(file, .extend(to: Int(call.offset) + Int(call.length))) }
        case .sync where !call.path.isEmpty:
            // A directory: its name changes become durable, in order.
            let directory = call.path
            for pending in pendingNames where pending.directory == directory { durable.apply(pending.kind) }
            pendingNames.removeAll { $0.directory == directory }
        case .sync:
            guard let file = file(call.inode) else { break }
            contents[file].durable = contents[file].current
            contents[file].pending = []
        case .syncAll:
            for pending in pendingNames { durable.apply(pending.kind) }
            pendingNames = []
            for index in contents.indices {
                contents[index].durable = contents[index].current
                contents[index].pending = []
            }
        case .rename:
            name(Self.directory(of: call.secondPath), .rename(call.path, call.secondPath))
        case .link:
            if let file = file(call.inode) { name(Self.directory(of: call.secondPath), .link(call.secondPath, file)) }
        case .unlink:
            name(Self.directory(of: call.path), .unlink(call.path))
        case .makeDirectory:
            name(Self.directory(of: call.path), .makeDirectory(call.path))
        case .removeDirectory:
            name(Self.directory(of: call.path), .removeDirectory(call.path))
        case .acknowledge, .open, .read, .list, .map:
            break
        }
    }

    /// A choice of what survived: for each directory with pending name changes and each file with pending writes, how
    /// many of them (the first ones) reached the disk, and whether a file's last one was torn.
    struct Survival {
        var directories: [String: Int] = [:]
        var files: [Int: Int] = [:]
        var torn: Set<Int> = []
        /// One of the states a quick exploration always opens: nothing pending survived, or one directory's changes
        /// alone (the state where, say, objects were removed and the refs naming them were not).
        var isCore = false
    }

    /// The units of pending work at this point: each directory's name changes, and each file's writes, with their counts.
    var pendingUnits: (directories: [String: Int], files: [Int: Int]) {
        var directories: [String: Int] = [:]
        for pending in pendingNames { directories[pending.directory, default: 0] += 1 }
        var files: [Int: Int] = [:]
        for (index, file) in contents.enumerated() where !file.pending.isEmpty { files[index] = file.pending.count }
        return (directories, files)
    }

    /// The directory tree a power cut now leaves when `survival` says what reached the disk (a unit it does not name:
    /// none of its pending work), as relative paths: files with their bytes, and directories.
    func state(_ survival: Survival) -> CrashState {
        var names = durable
        var taken: [String: Int] = [:]
        for pending in pendingNames {
            let index = taken[pending.directory, default: 0]
            taken[pending.directory] = index + 1
            if index < survival.directories[pending.directory, default: 0] { names.apply(pending.kind) }
        }
        var files: [String: [UInt8]] = [:]
        for (path, file) in names.files where names.isReachable(path) {
            var bytes = contents[file].durable
            let count = survival.files[file, default: 0]
            for (index, change) in contents[file].pending.prefix(count).enumerated() {
                File.apply(change, to: &bytes, torn: index == count - 1 && survival.torn.contains(file))
            }
            files[path] = bytes
        }
        return CrashState(files: files, directories: names.directories.filter(names.isReachable))
    }

    /// What a reader sees now: every call applied.
    var currentState: CrashState {
        var files: [String: [UInt8]] = [:]
        for (path, file) in current.files { files[path] = contents[file].current }
        return CrashState(files: files, directories: current.directories)
    }

    /// The survivals worth opening at this point: nothing, everything, each unit alone lagging or leading at every
    /// prefix, each file's last write torn, and `random` more drawn from `generator`. The first is nothing.
    func survivals(random: Int, generator: inout SeededRandom) -> [Survival] {
        let (directories, files) = pendingUnits
        var everything = Survival()
        everything.directories = directories
        everything.files = files
        var all = [Survival(isCore: true), everything]
        for (directory, count) in directories {
            for prefix in 0..<count {
                var lagging = everything
                lagging.directories[directory] = prefix
                all.append(lagging)
            }
            for prefix in 1...count {
                var leading = Survival()
                leading.directories[directory] = prefix
                leading.isCore = prefix == count
                all.append(leading)
            }
        }
        for (file, count) in files {
            for prefix in 0..<count {
                var lagging = everything
                lagging.files[file] = prefix
                all.append(lagging)
            }
            if case .write = contents[file].pending[count - 1] {
                var torn = everything
                torn.torn = [file]
                all.append(torn)
            }
        }
        for _ in 0..<random where !directories.isEmpty || !files.isEmpty {
            var drawn = Survival()
            for (directory, count) in directories { drawn.directories[directory] = generator.int(0...count) }
            for (file, count) in files {
                let prefix = generator.int(0...count)
                drawn.files[file] = prefix
                if prefix > 0, generator.chance(20) { drawn.torn.insert(file) }
            }
            all.append(drawn)
        }
        return all
    }
}

/// A directory tree as a power cut left it: relative paths of files with their bytes, and of directories.
struct CrashState: Hashable {
    let files: [String: [UInt8]]
    let directories: Set<String>

    /// Writes the tree into `path` (a new directory), every file dated `age` seconds ago, as after a reboot.
    func write(to path: String, age: TimeInterval) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        for directory in directories.sorted() {
            try manager.createDirectory(atPath: path + "/" + directory, withIntermediateDirectories: true)
        }
        // Whole seconds: once in a full run, setting a date with a fraction of a second failed with EINVAL ("Code=512
        // … Invalid argument" on HEAD); a whole second leaves Foundation's conversion nothing to round.
        let date = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - age).rounded(.down))
        for (relative, bytes) in files {
            let full = path + "/" + relative
            guard manager.createFile(atPath: full, contents: Data(bytes)) else { throw ReliabilityFailure("cannot write \(full)") }
            try manager.setAttributes([.modificationDate: date], ofItemAtPath: full)
        }
    }

    /// How this state differs from `other`, in a few words (for a trace that missed a call).
    func differences(from other: CrashState) -> [String] {
        var found: [String] = []
        for path in Set(files.keys).union(other.files.keys).sorted() where files[path] != other.files[path] {
            found.append(
                "\(path): \(files[path].map { "\($0.count) bytes" } ?? "absent") vs \(other.files[path].map { "\($0.count) bytes" } ?? "absent")")
        }
        for directory in directories.symmetricDifference(other.directories).sorted() { found.append("directory \(directory)") }
        return found
    }
}
