import Foundation
import Testbed
import Truce

enum StoreRows {
    static let start = Date(timeIntervalSince1970: 1_796_000_000)

    static func key(_ index: Int) -> DocumentKey { try! DocumentKey("docs/\(index).txt") }

    /// `count` saves spread over `documents` keys, each a few lines of text.
    static func batch(_ count: Int, documents: Int, seed: UInt64, device: String = "bench") -> [BatchSave] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            BatchSave(
                key: key(index % documents), content: Data(Corpus.lines(8, &random).joined().utf8), device: device,
                date: start.addingTimeInterval(Double(index)))
        }
    }

    /// 10,000 saves across 1,000 documents: the bulk path against git fast-import and against git plumbing per version.
    static func saves(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("saves")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saves = batch(scale.saves, documents: scale.savedDocuments, seed: 10)
        let store = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .createNew)
        let bulk = try seconds { _ = try store.saveBatchOnCallingThread(saves) }

        // fast-import writes the same commits: one per save, the document at its key, chained per document.
        var stream = Data()
        for (index, save) in saves.enumerated() {
            let message = "Save \(save.key)\n\nDocument: \(save.key)\nDevice: bench\n"
            let time = Int(start.timeIntervalSince1970) + index
            stream.append(
                Data(
                    "commit refs/truce/bench/\(index % scale.savedDocuments)\nauthor bench <bench@truce> \(time) +0000\ncommitter bench <bench@truce> \(time) +0000\ndata \(message.utf8.count)\n\(message)M 100644 inline \(save.key)\ndata \(save.content!.count)\n"
                        .utf8))
            stream.append(save.content!)
            stream.append(Data("\n".utf8))
        }
        writeFile(directory + "/stream", stream)
        shell("git init -q --bare fast.git", directory: directory)
        let fastImport = seconds { runChild("git", ["-C", directory + "/fast.git", "fast-import", "--quiet"], inputFile: directory + "/stream") }

        // Plumbing, one process per step, as a tool that shells out to git does: measured on a sample.
        shell("git init -q --bare plumbing.git", directory: directory)
        let sample = Array(saves.prefix(scale.plumbingSample))
        for (index, save) in sample.enumerated() { writeFile("\(directory)/content\(index)", save.content) }
        let plumbing = seconds {
            for index in sample.indices {
                let git = "git -C plumbing.git"
                shell(
                    """
                    blob=$(\(git) hash-object -w content\(index)); \
                    inner=$(printf '100644 blob %s\\t\(index).txt\\n' $blob | \(git) mktree); \
                    root=$(printf '040000 tree %s\\tdocs\\n' $inner | \(git) mktree); \
                    parent=$(\(git) rev-parse -q --verify refs/truce/p/\(index % scale.savedDocuments)) && p="-p $parent" || p=""; \
                    commit=$(\(git) commit-tree $root $p -m 'Save docs/\(index).txt'); \
                    \(git) update-ref refs/truce/p/\(index % scale.savedDocuments) $commit
                    """, directory: directory)
            }
        }
        var singles: [DocumentKey: VersionID] = [:]
        let single = try seconds {
            for save in sample.prefix(50) { singles[save.key] = try store.save(save.content!, to: save.key, device: "bench").id }
        }
        // A reference row, met when every one-at-a-time save is its document's current version afterwards.
        let singlesLanded = try singles.allSatisfy { try store.currentVersion(of: $0.key)?.id == $0.value }
        let bulkRate = Double(saves.count) / bulk, fastRate = Double(saves.count) / fastImport
        let plumbingRate = Double(sample.count) / plumbing, singleRate = 50 / single
        return [
            Row(
                work: "\(saves.count) saves across \(scale.savedDocuments) documents, bulk (saveBatch)",
                truce: String(format: "%.0f saves/s", bulkRate),
                baseline: String(format: "git fast-import: %.0f saves/s", fastRate), ratio: bulkRate / fastRate, target: "≥ 0.5× fast-import",
                met: bulkRate / fastRate >= 0.5),
            Row(
                work: "  the same, against git plumbing per version (\(sample.count) sampled)", truce: String(format: "%.0f saves/s", bulkRate),
                baseline: String(format: "plumbing: %.1f saves/s", plumbingRate), ratio: bulkRate / plumbingRate, target: "≥ 20× plumbing",
                met: bulkRate / plumbingRate >= 20),
            Row(
                work: "  one save at a time (save, fsynced, 50 sampled)", truce: String(format: "%.0f saves/s", singleRate),
                baseline: String(format: "plumbing: %.1f saves/s", plumbingRate), ratio: singleRate / plumbingRate,
                target: "(reference; every save current)",
                met: singlesLanded),
        ]
    }

    /// A store with `count` documents in conflict: a base and two heads each, edits that merge cleanly.
    static func conflictedStore(at path: String, count: Int) throws -> DocumentStore {
        let store = try DocumentStore(directory: URL(fileURLWithPath: path), mode: .createNew)
        var random = SeededRandom(seed: 44)
        let triples = (0..<count).map { _ in Corpus.triple(lines: 60, &random) }
        let bases = try store.saveBatchOnCallingThread(
            triples.indices.map { BatchSave(key: key($0), content: triples[$0].base, device: "origin", date: start) })
        _ = try store.saveBatchOnCallingThread(
            triples.indices.flatMap { index in
                [
                    BatchSave(key: key(index), content: triples[index].ours, device: "laptop", date: start.addingTimeInterval(60)),
                    BatchSave(
                        key: key(index), content: triples[index].theirs, device: "phone", date: start.addingTimeInterval(120), base: bases[index]),
                ]
            })
        try Data("*.txt merge=three-way\n".utf8).write(to: URL(fileURLWithPath: path + "/info/attributes"))
        return store
    }

    /// Resolving 1,000 documents with three-way against a shell script doing the same with git commands.
    static func resolve(_ scale: Scale) async throws -> [Row] {
        let directory = scratchDirectory("resolve")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try conflictedStore(at: directory + "/truce", count: scale.conflicts)
        shell("cp -r truce git", directory: directory)
        var script = "set -e\ncd git\n"
        for index in 0..<scale.conflicts {
            let heads = ObjectIDs.headDirectory(of: key(index))
            script += """
                set -- $(git for-each-ref --format='%(objectname)' \(heads)); a=$1; b=$2
                base=$(git merge-base $a $b)
                git show $a:docs/\(index).txt > ours; git show $base:docs/\(index).txt > base; git show $b:docs/\(index).txt > theirs
                git merge-file ours base theirs || true
                blob=$(git hash-object -w ours)
                inner=$(printf '100644 blob %s\\t\(index).txt\\n' $blob | git mktree)
                root=$(printf '040000 tree %s\\tdocs\\n' $inner | git mktree)
                commit=$(git commit-tree $root -p $a -p $b -m 'Resolve docs/\(index).txt')
                git update-ref \(heads)$commit $commit; git update-ref -d \(heads)$a; git update-ref -d \(heads)$b

                """
        }
        writeFile(directory + "/resolve.sh", Data(script.utf8))
        let truce = try await secondsAwaiting { _ = try await store.resolveAll(registry: .standard, device: "bench") }
        let git = seconds { shell("sh resolve.sh > /dev/null 2>&1", directory: directory) }
        let left = try store.documentsInConflict().count
        return [
            Row(
                work: "resolve \(scale.conflicts) documents in conflict with three-way (resolveAll; \(left) need a person)",
                truce: format(truce), baseline: "shell script of git commands: \(format(git))", ratio: git / truce, target: "≥ 25× faster",
                met: git / truce >= 25)
        ]
    }

    /// Resolving the same conflict met again in 1,000 documents by replaying one person's recorded answer, against
    /// resolving 1,000 conflicts that three-way merges cleanly (the row above's work): what remembering costs.
    static func replay(_ scale: Scale) async throws -> [Row] {
        let directory = scratchDirectory("replay")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .createNew)
        var random = SeededRandom(seed: 45)
        // Every document differs, but holds the same disagreement at one line: the two edits meet again.
        let texts = (0...scale.conflicts).map { _ in Corpus.lines(40, &random) }
        func content(_ lines: [String], _ middle: String) -> Data { Data((lines[..<20] + [middle + "\n"] + lines[21...]).joined().utf8) }
        let bases = try await store.saveBatch(
            texts.indices.map { BatchSave(key: key($0), content: content(texts[$0], "the line"), device: "origin", date: start) })
        _ = try await store.saveBatch(
            texts.indices.flatMap { index in
                [
                    BatchSave(
                        key: key(index), content: content(texts[index], "the line, laptop"), device: "laptop", date: start.addingTimeInterval(60)),
                    BatchSave(
                        key: key(index), content: content(texts[index], "the line, phone"), device: "phone", date: start.addingTimeInterval(120),
                        base: bases[index]),
                ]
            })
        // A person answers the first; the others are the same conflict met again.
        _ = try await store.resolve(key(0), answering: ["H1": .both], device: "person")
        let replayed = try await secondsAwaiting { _ = try await store.resolveAll(device: "bench") }
        let left = try store.documentsInConflict().count
        let cleanDirectory = scratchDirectory("replay-clean")
        defer { try? FileManager.default.removeItem(atPath: cleanDirectory) }
        let clean = try conflictedStore(at: cleanDirectory + "/truce", count: scale.conflicts)
        let threeWay = try await secondsAwaiting { _ = try await clean.resolveAll(device: "bench") }
        return [
            Row(
                work: "resolve \(scale.conflicts) documents in one recurring conflict by replaying a recorded answer (\(left) left)",
                truce: format(replayed), baseline: "three-way on \(scale.conflicts) clean conflicts: \(format(threeWay))", ratio: threeWay / replayed,
                target: "(reference)", met: left == 0)
        ]
    }

    /// `versions` of one document in stores of growing size: the time must not follow the store's size.
    static func versions(_ scale: Scale) throws -> [Row] {
        var times: [(Int, Double)] = []
        for size in scale.storeSizes {
            let directory = scratchDirectory("versions")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let created = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .createNew)
            for chunk in stride(from: 0, to: size, by: 20_000) {
                _ = try created.saveBatchOnCallingThread(
                    (chunk..<min(size, chunk + 20_000)).map { BatchSave(key: key($0), content: Data("\($0)\n".utf8), device: "bench", date: start) })
            }
            let store = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .openExisting)
            var random = SeededRandom(seed: 7)
            let probes = (0..<300).map { _ in key(random.int(0..<size)) }
            let time = try bestOf(3) { for probe in probes { _ = try store.versions(of: probe) } } / Double(probes.count)
            times.append((size, time))
        }
        let reference = times[0].1
        return times.dropFirst().map { size, time in
            Row(
                work: "versions of one document in a store of \(size) documents", truce: format(time),
                baseline: "itself at \(times[0].0): \(format(reference))", ratio: time / reference, target: "≤ 1.5×", met: time / reference <= 1.5)
        }
    }

    /// `changes --since` and `status` with few and many changed documents in one large store.
    static func statusAndChanges(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("changes")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .createNew)
        let bases = try store.saveBatchOnCallingThread(
            (0..<scale.largeStore).map { BatchSave(key: key($0), content: Data("\($0)\n".utf8), device: "bench", date: start) })
        let (few, many) = scale.changedDocuments

        /// Puts the first `count` documents into conflict and returns the token from before.
        func change(_ count: Int, offset: Int) throws -> ChangeHistory.Token {
            let token = try store.changes(since: try store.changes().token).token
            _ = try store.saveBatchOnCallingThread(
                (offset..<offset + count).flatMap { index in
                    [
                        BatchSave(key: key(index), content: Data("a\(index)\n".utf8), device: "laptop", date: start.addingTimeInterval(60)),
                        BatchSave(
                            key: key(index), content: Data("b\(index)\n".utf8), device: "phone", date: start.addingTimeInterval(90),
                            base: bases[index]),
                    ]
                })
            return token
        }
        let fewToken = try change(few, offset: 0)
        let fewChanges = try bestOf(3) { _ = try store.changes(since: fewToken) }
        let fewStatus = try bestOf(3) { _ = try store.documentsInConflict() }
        let manyToken = try change(many - few, offset: few)
        let manyChanges = try bestOf(3) { _ = try store.changes(since: manyToken) }
        let manyStatus = try bestOf(3) { _ = try store.documentsInConflict() }
        // Cost per changed document, few against many: near 1 when the cost follows the changes.
        let changesRatio = (fewChanges / Double(2 * few)) / (manyChanges / Double(2 * (many - few)))
        let statusRatio = (fewStatus / Double(few)) / (manyStatus / Double(many))
        return [
            Row(
                work: "changes --since, \(2 * few) vs \(2 * (many - few)) changes in a \(scale.largeStore)-document store",
                truce: "\(format(fewChanges)) / \(format(manyChanges))", baseline: "cost per change, few over many",
                ratio: changesRatio, target: "≤ 3× (follows the changes)", met: changesRatio <= 3),
            Row(
                work: "status, \(few) vs \(many) documents in conflict in a \(scale.largeStore)-document store",
                truce: "\(format(fewStatus)) / \(format(manyStatus))", baseline: "cost per conflict, few over many",
                ratio: statusRatio, target: "≤ 3× (follows the changes)", met: statusRatio <= 3),
        ]
    }

    /// prune --now of a store with 10,000 dropped versions against `git gc --prune=now` on a copy.
    static func prune(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("prune")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let documents = scale.droppedVersions / 10
        let store = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .createNew)
        let ids = try store.saveBatchOnCallingThread(batch(scale.droppedVersions + documents, documents: documents, seed: 99))
        // Move every document back to its first version: the other ten versions of each are dropped.
        var script = "set -e\n"
        for index in 0..<documents {
            let heads = ObjectIDs.headDirectory(of: key(index))
            let last = ids[ids.count - documents + index]
            script += "git update-ref -d \(heads)\(last.hex)\ngit update-ref \(heads)\(ids[index].hex) \(ids[index].hex)\n"
        }
        writeFile(directory + "/drop.sh", Data(script.utf8))
        shell("cd truce && sh ../drop.sh", directory: directory)
        shell("cp -r truce git", directory: directory)
        let truce = try seconds { _ = try store.pruneOnCallingThread(expire: 0) }
        let git = seconds {
            runChild(
                "git",
                ["-C", directory + "/git", "-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "--prune=now", "--quiet"])
        }
        let truceSize = packSize(directory + "/truce"), gitSize = packSize(directory + "/git")
        return [
            Row(
                work: "prune --now of \(scale.droppedVersions) dropped versions (space after: \(truceSize / 1024) KiB vs git \(gitSize / 1024) KiB)",
                truce: format(truce), baseline: "git gc --prune=now: \(format(git))", ratio: git / truce, target: "≥ 1× git's speed",
                met: git / truce >= 1)
        ]
    }

    static func packSize(_ store: String) -> Int {
        let output = runChild("git", ["-C", store, "count-objects", "-v"]).output
        return String(decoding: output, as: UTF8.self).split(separator: "\n").reduce(0) { total, line in
            let parts = line.split(separator: ":")
            guard parts.count == 2, ["size", "size-pack"].contains(parts[0]) else { return total }
            return total + (Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0) * 1024
        }
    }
}

/// Where a document's head refs live, as `git for-each-ref` wants it (the layout the StoreFormat article describes).
enum ObjectIDs {
    static func headDirectory(of key: DocumentKey) -> String {
        let hash = runChild("/bin/sh", ["-c", "printf %s \"$KEY\" | git hash-object --stdin"], environment: ["KEY": key.rawValue]).output
        let hex = String(decoding: hash, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return "refs/truce/heads/\(hex.prefix(2))/\(hex.dropFirst(2))/"
    }
}
