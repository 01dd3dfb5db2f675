import Foundation
import Testbed
import Truce

/// `truce-bench --scale`: what one operation costs as the store grows, at 10,000 and 100,000 documents (and
/// 1,000,000 with `--million`), each beside plain git's equivalent on the same data in the same run, with each row's
/// growth since the smallest size.
///
/// Every Truce figure is the release `truce` run as a process, as a user runs
/// it, with its peak memory; git's are git commands on the same store (which
/// git reads as any repository), a `git clone --mirror` of the hub, or a
/// fast-import of the same documents.
enum ScaleRows {
    /// Runs of each repeated measurement; the rows show the median.
    static let runs = 3
    /// Saves in a row for the sequential rate.
    static let sequentialSaves = 10

    static func sizes(quick: Bool, million: Bool) -> [Int] {
        quick ? [1000, 10_000] : [10_000, 100_000] + (million ? [1_000_000] : [])
    }

    /// The most memory bulk work may take at any size (300 MB, as the process's peak resident bytes): memory follows
    /// the batch, not the store.
    static let memoryCeiling = 300_000_000

    /// One figure of a size: Truce's seconds (and peak bytes), git's seconds, and what to print beside them, with the
    /// target it is held to (`goal`) and whether it met it.
    struct Figure {
        var truce: Double, git: Double
        var peak = 0
        var truceNote = "", gitNote = ""
        var goal = ""
        var met = true
        /// The most this figure may grow over the smallest size's (a save's cost must not follow the store).
        var maxGrowth: Double?
    }

    /// A figure held to the memory ceiling and to `times` git's time.
    static func bounded(_ truce: Timed, git: Double, within times: Double) -> Figure {
        Figure(
            truce: truce.seconds, git: git, peak: truce.peak, goal: "≤ \(times.formatted())× git's time, ≤ 300 MB",
            met: truce.peak <= memoryCeiling && truce.seconds <= times * git)
    }

    static func rows(sizes: [Int]) throws -> [Row] {
        var figures: [String: [Int: Figure]] = [:]
        var order: [String] = []
        for documents in sizes {
            let directory = scratchDirectory("scale")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            for (name, figure) in try measure(documents: documents, in: directory) {
                if figures[name] == nil { order.append(name) }
                figures[name, default: [:]][documents] = figure
            }
        }
        var rows: [Row] = []
        for name in order {
            let bySize = figures[name] ?? [:]
            guard let smallest = sizes.first(where: { bySize[$0] != nil }), let first = bySize[smallest] else { continue }
            for documents in sizes {
                guard let figure = bySize[documents] else { continue }
                let growth = figure.truce / first.truce, gitGrowth = figure.git / first.git
                let peak = figure.peak > 0 ? ", \(figure.peak / 1_000_000) MB" : ""
                let grew =
                    documents == smallest
                    ? "(growth from here)" : String(format: "growth ×%.2f (git ×%.2f) since %d", growth, gitGrowth, smallest)
                let withinGrowth = documents == smallest || figure.maxGrowth.map { growth <= $0 } ?? true
                rows.append(
                    Row(
                        work: "\(name), \(documents) documents",
                        truce: figure.truceNote.isEmpty ? format(figure.truce) + peak : figure.truceNote + peak,
                        baseline: figure.gitNote.isEmpty ? format(figure.git) : figure.gitNote, ratio: figure.git / figure.truce,
                        target: figure.goal.isEmpty ? grew : grew + "; " + figure.goal,
                        met: figure.met && withinGrowth))
            }
        }
        return rows
    }

    /// Builds the stores of one size and measures every row on them.
    private static func measure(documents: Int, in directory: String) throws -> [(String, Figure)] {
        let truce = truceExecutable()
        let step = { (text: String) in FileHandle.standardError.write(Data("truce-bench: scale \(documents): \(text)\n".utf8)) }
        let writer = directory + "/writer", reader = directory + "/reader", hub = directory + "/hub.git"
        let mirror = directory + "/mirror.git", gitHub = directory + "/git-hub.git", gitReader = directory + "/git-reader.git"
        var results: [(String, Figure)] = []

        step("writing the documents as a stream")
        let (stream, fastImport) = try streams(documents: documents, in: directory)

        step("import")
        _ = try run(truce, ["--store", writer, "init"])
        let imported = try timed(truce, ["--store", writer, "import", "-", "--device", "bench"], input: stream)
        _ = try run("/usr/bin/git", ["init", "-q", "--bare", directory + "/fast-import.git"])
        let gitImported = try timed("/usr/bin/git", ["-C", directory + "/fast-import.git", "fast-import", "--quiet"], input: fastImport)
        results.append(
            (
                "import of the documents (truce import - / git fast-import)", bounded(imported, git: gitImported.seconds, within: 1.2)
            ))

        step("first push of a replica into an empty hub")
        _ = try run("/usr/bin/git", ["init", "-q", "--bare", hub])
        let pushed = try timed(truce, ["--store", writer, "sync", hub])
        let pushTarget = directory + "/push-target.git"
        _ = try run("/usr/bin/git", ["init", "-q", "--bare", pushTarget])
        let gitPushed = try timed("/usr/bin/git", ["-C", directory + "/fast-import.git", "push", "-q", "--mirror", pushTarget])
        try? FileManager.default.removeItem(atPath: pushTarget)
        results.append(
            (
                "first push of a replica into an empty hub on a local path (git push --mirror)", bounded(pushed, git: gitPushed.seconds, within: 3)
            ))
        _ = try run(truce, ["--store", reader, "init"])

        step("first sync of a new replica")
        let first = try timed(truce, ["--store", reader, "sync", hub])
        let clone = try timed("/usr/bin/git", ["clone", "-q", "--no-local", "--mirror", hub, mirror])
        let disk = diskKiB(reader), mirrorDisk = diskKiB(mirror)
        results.append(
            (
                "first sync of a new replica from a local path (git clone --no-local --mirror)",
                Figure(
                    truce: first.seconds, git: clone.seconds, peak: first.peak,
                    truceNote: "\(format(first.seconds)), \(mebibytes(disk))", gitNote: "\(format(clone.seconds)), \(mebibytes(mirrorDisk))",
                    goal: "≤ 1.5× the clone's time, ≤ 2× its disk, ≤ 300 MB",
                    met: first.peak <= memoryCeiling && first.seconds <= 1.5 * clone.seconds && disk <= 2 * mirrorDisk)
            ))
        _ = try run("/usr/bin/git", ["clone", "-q", "--mirror", hub, gitHub])
        _ = try run("/usr/bin/git", ["clone", "-q", "--mirror", gitHub, gitReader])

        let key = "d5/doc5.txt"
        let token = try changesToken(truce, writer)
        step("single saves")
        var saves: [Timed] = []
        var plumbing: [Double] = []
        for round in 0..<runs {
            let content = directory + "/content"
            writeFile(content, Data("saved \(round) at \(documents)\n".utf8))
            saves.append(try timed(truce, ["--store", writer, "save", key, content, "--device", "bench"]))
            plumbing.append(try gitSave(in: mirror, round: round, content: content))
        }
        results.append(
            (
                "one save (git hash-object, mktree, commit-tree, update-ref)",
                Figure(
                    truce: median(saves.map(\.seconds)), git: median(plumbing), peak: saves.map(\.peak).max() ?? 0,
                    goal: "≤ 1.2× git's plumbing; growth ≤ ×2", met: median(saves.map(\.seconds)) <= 1.2 * median(plumbing), maxGrowth: 2)
            ))

        step("sequential saves")
        let content = directory + "/content"
        var truceSequence = 0.0, gitSequence = 0.0
        for round in 0..<sequentialSaves {
            writeFile(content, Data("in a row \(round)\n".utf8))
            truceSequence += try timed(truce, ["--store", writer, "save", "d6/doc6.txt", content, "--device", "bench"]).seconds
            gitSequence += try gitSave(in: mirror, round: 100 + round, content: content)
        }
        let rate = Double(sequentialSaves) / truceSequence, gitRate = Double(sequentialSaves) / gitSequence
        results.append(
            (
                "\(sequentialSaves) saves in a row, each a process",
                Figure(
                    truce: truceSequence, git: gitSequence, truceNote: String(format: "%.1f saves/s", rate),
                    gitNote: String(format: "git plumbing: %.1f saves/s", gitRate))
            ))

        step("reads")
        let headsDirectory = "refs/truce/heads/" + headsPath(of: key)
        let versionsTime = try medianTime(truce, ["--store", writer, "versions", key])
        let gitVersions = try medianTime("/usr/bin/git", ["-C", writer, "for-each-ref", headsDirectory])
        results.append(
            (
                "versions of one document (git for-each-ref of its heads)",
                Figure(truce: versionsTime.seconds, git: gitVersions.seconds, peak: versionsTime.peak)
            ))
        let head = try run(truce, ["--store", writer, "versions", key, "--json"])
        let current = (try JSONSerialization.jsonObject(with: head.output) as? [String: Any])?["current"] as? [String: Any]
        let id = current?["id"] as? String ?? "HEAD"
        let catTime = try medianTime(truce, ["--store", writer, "cat", key])
        let gitCat = try medianTime("/usr/bin/git", ["-C", writer, "cat-file", "-p", "\(id):\(key)"])
        results.append(("cat of one document (git cat-file -p)", Figure(truce: catTime.seconds, git: gitCat.seconds, peak: catTime.peak)))
        let statusTime = try medianTime(truce, ["--store", writer, "status"])
        let gitStatus = try medianTime("/usr/bin/git", ["-C", writer, "for-each-ref", "refs/truce/conflicts/"])
        results.append(
            ("status (git for-each-ref of the conflict markers)", Figure(truce: statusTime.seconds, git: gitStatus.seconds, peak: statusTime.peak)))
        let changesTime = try medianTime(truce, ["--store", writer, "changes", "--since", token])
        let entry = String(token.dropFirst(3))
        let gitChanges = try medianTime("/usr/bin/git", ["-C", writer, "log", "--format=%H %s", "\(entry)..refs/truce/journal"])
        results.append(
            (
                "changes --since a token \(runs + sequentialSaves) saves back (git log of the journal)",
                Figure(truce: changesTime.seconds, git: gitChanges.seconds, peak: changesTime.peak)
            ))

        step("one change synced up and down")
        _ = try run(truce, ["--store", writer, "sync", hub])
        _ = try run(truce, ["--store", reader, "sync", hub])
        var up: [Double] = [], down: [Double] = [], gitUp: [Double] = [], gitDown: [Double] = []
        for round in 0..<runs {
            writeFile(content, Data("synced \(round)\n".utf8))
            _ = try run(truce, ["--store", writer, "save", key, content, "--device", "bench"])
            up.append(try timed(truce, ["--store", writer, "sync", hub]).seconds)
            down.append(try timed(truce, ["--store", reader, "sync", hub]).seconds)
            let commit = try gitCommit(in: mirror, round: 200 + round, content: content)
            gitUp.append(try timed("/usr/bin/git", ["-C", mirror, "push", "-q", gitHub, "+\(commit):refs/heads/bench"]).seconds)
            gitDown.append(try timed("/usr/bin/git", ["-C", gitReader, "fetch", "-q", gitHub, "+refs/heads/bench:refs/heads/bench"]).seconds)
        }
        results.append(
            ("one change synced up (git push of one commit)", Figure(truce: median(up), git: median(gitUp), goal: "< 0.2 s", met: median(up) < 0.2)))
        results.append(
            (
                "one change synced down (git fetch of one commit)",
                Figure(truce: median(down), git: median(gitDown), goal: "< 0.2 s", met: median(down) < 0.2)
            ))

        step("no-op sync")
        let noOp = try medianTime(truce, ["--store", reader, "sync", hub])
        let gitNoOp = try medianTime("/usr/bin/git", ["-C", gitReader, "fetch", "-q", gitHub, "+refs/heads/bench:refs/heads/bench"])
        results.append(("no-op sync (git fetch that brings nothing)", Figure(truce: noOp.seconds, git: gitNoOp.seconds, peak: noOp.peak)))

        step("prune --now against git gc --prune=now on a copy")
        let copy = directory + "/gc-copy"
        _ = try run("/bin/cp", ["-a", writer, copy])
        let before = diskKiB(writer)
        let pruned = try timed(truce, ["--store", writer, "prune", "--now"])
        let gc = try timed("/usr/bin/git", ["-C", copy, "gc", "-q", "--prune=now"])
        let after = diskKiB(writer), gitAfter = diskKiB(copy)
        results.append(
            (
                "prune --now (git gc --prune=now), disk before → after",
                Figure(
                    truce: pruned.seconds, git: gc.seconds, peak: pruned.peak,
                    truceNote: "\(format(pruned.seconds)), \(mebibytes(before)) → \(mebibytes(after))",
                    gitNote: "\(format(gc.seconds)), \(mebibytes(before)) → \(mebibytes(gitAfter))",
                    goal: "never bigger, ≤ gc's size and time, ≤ 300 MB",
                    met: after <= before && after <= gitAfter && pruned.seconds <= gc.seconds && pruned.peak <= memoryCeiling)
            ))
        return results
    }

    /// The documents as `truce import -` reads them (`M 100644 inline` records of about 100 bytes), and the same
    /// records as one commit for `git fast-import`.
    private static func streams(documents: Int, in directory: String) throws -> (String, String) {
        var records = Data()
        for index in 0..<documents {
            let body = Data(("document \(index)\n" + String(repeating: "x", count: 80) + "\n").utf8)
            records += Data("M 100644 inline d\(index % 1000)/doc\(index).txt\ndata \(body.count)\n".utf8) + body + Data("\n".utf8)
        }
        let stream = directory + "/stream", fastImport = directory + "/fast-import"
        writeFile(stream, records)
        writeFile(fastImport, Data("commit refs/heads/main\ncommitter bench <bench@truce> 1796000000 +0000\ndata 6\nimport\n".utf8) + records)
        return (stream, fastImport)
    }

    /// A timed process: seconds and peak resident bytes.
    struct Timed {
        let seconds: Double
        let peak: Int
    }

    /// Runs `executable` measuring time and peak memory; fails the row when it fails.
    private static func timed(_ executable: String, _ arguments: [String], input: String? = nil) throws -> Timed {
        let child = runChildMeasuringPeak(executable, arguments, inputFile: input)
        guard child.status == 0 else { throw BenchFailure("\(executable) \(arguments.joined(separator: " ")) exited \(child.status)") }
        return Timed(seconds: child.seconds, peak: child.peakBytes)
    }

    /// The median of `runs` timed runs, with the largest peak.
    private static func medianTime(_ executable: String, _ arguments: [String]) throws -> Timed {
        let all = try (0..<runs).map { _ in try timed(executable, arguments) }
        return Timed(seconds: median(all.map(\.seconds)), peak: all.map(\.peak).max() ?? 0)
    }

    /// Runs a command, failing when it fails; its output.
    private static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> ChildResult {
        let result = runChild(executable, arguments, inputFile: input)
        guard result.status == 0 else { throw BenchFailure("\(executable) \(arguments.joined(separator: " ")) exited \(result.status)") }
        return result
    }

    /// git's one save, in a repository holding the same refs: the blob, two trees, a commit and its ref, in seconds.
    private static func gitSave(in repository: String, round: Int, content: String) throws -> Double {
        var commit = ""
        let time = try seconds { commit = try gitCommit(in: repository, round: round, content: content) }
        return time + (try timed("/usr/bin/git", ["-C", repository, "update-ref", "refs/bench/\(round)", commit, ""]).seconds)
    }

    /// A commit holding `content` at d5/doc5.txt, made by git plumbing; its id.
    private static func gitCommit(in repository: String, round: Int, content: String) throws -> String {
        let git = "git -C \"$REPOSITORY\" -c user.name=bench -c user.email=bench@truce"
        let script =
            "blob=$(\(git) hash-object -w \"$CONTENT\") && "
            + "inner=$(printf '100644 blob %s\\tdoc5.txt\\n' $blob | \(git) mktree) && "
            + "outer=$(printf '040000 tree %s\\td5\\n' $inner | \(git) mktree) && "
            + "\(git) commit-tree $outer -m 'save \(round)'"
        let result = runChild("/bin/sh", ["-c", script], environment: ["REPOSITORY": repository, "CONTENT": content])
        guard result.status == 0 else { throw BenchFailure("git plumbing save exited \(result.status)") }
        return String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The journal token `truce changes` gives now.
    private static func changesToken(_ truce: String, _ store: String) throws -> String {
        let output = try run(truce, ["--store", store, "changes", "--json"]).output
        guard let token = (try JSONSerialization.jsonObject(with: output) as? [String: Any])?["token"] as? String else {
            throw BenchFailure("truce changes --json gave no token")
        }
        return token
    }

    /// `<aa>/<bbbb…>/`, where a document's heads live below `refs/truce/heads/`: the key's blob hash.
    private static func headsPath(of key: String) -> String {
        let hash = String(
            decoding: runChild("/bin/sh", ["-c", "printf %s \"$KEY\" | git hash-object --stdin"], environment: ["KEY": key]).output, as: UTF8.self
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        return "\(hash.prefix(2))/\(hash.dropFirst(2))/"
    }

    private static func mebibytes(_ kibibytes: Int) -> String { String(format: "%.1f MiB", Double(kibibytes) / 1024) }

    private static func diskKiB(_ path: String) -> Int {
        Int(String(decoding: runChild("du", ["-sk", path]).output, as: UTF8.self).split(separator: "\t").first ?? "") ?? 0
    }
}
