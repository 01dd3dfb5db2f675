import Foundation
import Truce

/// `truce resolve DOC --tool NAME`: the conflict settled in a git mergetool, as `git mergetool` runs one.
///
/// The heads are taken one pair at a time, in the order of the session
/// (the current version first): LOCAL is the merge so far (at first the
/// current version), REMOTE the next head, BASE their base, and MERGED the
/// three-way merge of them with its conflict markers. A pair that merges
/// cleanly needs no tool. After each run MERGED must have changed (or, for
/// a tool whose exit status is trusted, the tool must exit 0) and hold no
/// conflict marker; otherwise nothing is written. The last MERGED is written
/// as the person's whole-file answer: the resolution commit a session writes
/// for that content.
///
/// Exit codes: 0 written; 1 the tool failed, left MERGED unchanged or left
/// conflict markers (nothing written, the conflict remains); 2 an unknown
/// tool, or a conflict no text tool can merge (a deletion, binary content).
enum ResolveWithTool {
    static func run(_ invocation: Invocation, tool name: String) async throws -> ExitCode {
        let arguments = invocation.arguments
        let conflicting =
            ["--take", "--content", "--resolver"].filter { arguments.value($0) != nil }
            + ["--delete", "--dry-run", "--all"].filter { arguments.has($0) }
        if let first = conflicting.first { throw UsageError("--tool resolves one document in a merge tool; it takes no \(first)") }
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let store = try invocation.openStore()
        let session = try await store.resolutionSession(for: key)
        let conflict = try store.contestedConflictSet(of: key)
        let heads = conflict.heads
        for head in heads {
            guard let content = head.content else {
                throw InputError(
                    "\(head.version.deviceName) \(head.version.id.short) deletes \(key): a merge tool merges text; use resolve -i or --take")
            }
            if TextMerge.isBinary(content) {
                throw InputError("\(key) holds binary content at \(head.version.id.short): a merge tool merges text; use resolve -i or --take")
            }
        }
        let repository = try GitRepository.discover(from: store.path, gitDirectory: store.path)
        let tool = try MergeTool.named(
            name,
            config: { name in try repository?.configValues(name, outsideFiles: []).last ?? nil },
            hasBase: conflict.base != nil)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("truce-mergetool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = Files(directory: directory.path, key: key)
        let base = conflict.base?.content ?? Data()
        var local = heads[0].content ?? Data()
        for (index, remote) in heads.dropFirst().enumerated() {
            let pair = "\(index + 1) of \(heads.count - 1)"
            let markers = ConflictMarkers(avoiding: [base, local, remote.content])
            var options = TextMergeOptions(markerSize: markers.size)
            options.oursLabel = index == 0 ? session.label(of: side(heads[0], of: conflict)) : "merged so far"
            options.theirsLabel = session.label(of: side(remote, of: conflict))
            options.baseLabel = session.baseLabel
            options.coalescesNonAlphanumericRegions = false
            guard let merge = try TextMerge.merge(base: base, ours: local, theirs: remote.content ?? Data(), options: options) else {
                throw InputError("\(key) holds binary content: a merge tool merges text; use resolve -i or --take")
            }
            if merge.isClean {
                local = merge.content
                continue
            }
            try files.write(local: local, base: base, remote: remote.content ?? Data(), merged: merge.content)
            invocation.output.out(
                "merging \(key), pair \(pair): LOCAL \(options.oursLabel), REMOTE \(options.theirsLabel), with \(tool.name)")
            var variables = files.variables
            variables["TRUCE_MERGETOOL"] = tool.program
            let status = try AttachedProcess.shell(tool.command, variables: variables)
            let result = try Data(contentsOf: URL(fileURLWithPath: files.merged))
            if tool.trustsExitCode, status != 0 {
                throw ToolFailure("merge tool '\(tool.name)' exited with status \(status) on pair \(pair); nothing was written")
            }
            if !tool.trustsExitCode, result == merge.content, !files.mergedWasTouched() {
                throw ToolFailure("merge tool '\(tool.name)' left MERGED unchanged on pair \(pair); nothing was written")
            }
            if let line = markers.firstMarker(in: result) {
                throw ToolFailure("MERGED still holds a conflict marker on line \(line) after pair \(pair); nothing was written")
            }
            local = result
        }
        // The tool may have taken long: the answer is for the heads it saw.
        guard try store.contestedConflictSet(of: key).heads.map(\.version.id) == heads.map(\.version.id) else {
            throw ToolFailure("new versions of \(key) arrived while the tool ran; nothing was written, run it again")
        }
        let device = invocation.device()
        return try ResolveCommand.report(await store.resolve(key, to: local, device: device), key, store, invocation)
    }

    /// A head as a point's side, for the session's label of it (device, date, id, "current").
    private static func side(_ head: ConflictSet.Side, of conflict: ConflictSet) -> ConflictPoint.Side {
        ConflictPoint.Side(
            version: head.version.id, deviceName: head.version.deviceName, isCurrent: head.version.id == conflict.current.version.id, lines: nil,
            text: nil)
    }

    /// The tool failed or left markers: nothing written, the conflict remains (exit 1).
    struct ToolFailure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// The four files, named as git names them (`todo_LOCAL_1234.md` beside `todo.md`), and MERGED's time to tell
    /// whether the tool saved it.
    private struct Files {
        let local: String, base: String, remote: String, merged: String
        private let stamp: String

        init(directory: String, key: DocumentKey) {
            let name = PointEditor.fileName(key.rawValue.split(separator: "/").last.map(String.init) ?? "document")
            let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
            let (stem, suffix) = dot.map { (String(name[..<$0]), String(name[$0...])) } ?? (name, "")
            let pid = ProcessInfo.processInfo.processIdentifier
            local = "\(directory)/\(stem)_LOCAL_\(pid)\(suffix)"
            base = "\(directory)/\(stem)_BASE_\(pid)\(suffix)"
            remote = "\(directory)/\(stem)_REMOTE_\(pid)\(suffix)"
            merged = "\(directory)/\(name)"
            stamp = "\(directory)/.merged-written"
        }

        var variables: [String: String] { ["LOCAL": local, "BASE": base, "REMOTE": remote, "MERGED": merged] }

        func write(local: Data, base: Data, remote: Data, merged: Data) throws {
            try local.write(to: URL(fileURLWithPath: self.local))
            try base.write(to: URL(fileURLWithPath: self.base))
            try remote.write(to: URL(fileURLWithPath: self.remote))
            try merged.write(to: URL(fileURLWithPath: self.merged))
            // git compares MERGED's time with a backup's; a second file written just after stands in for it.
            try Data().write(to: URL(fileURLWithPath: stamp))
        }

        /// True when MERGED was written after the files were made, as git's `"$MERGED" -nt "$BACKUP"`.
        func mergedWasTouched() -> Bool {
            let attributes = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date }
            guard let merged = attributes(merged), let made = attributes(stamp) else { return false }
            return merged > made
        }
    }
}
