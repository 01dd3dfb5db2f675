import CBenchLimit
import Foundation
import Testbed
import Truce

enum MergeRows {
    /// 2,000 realistic triples: Truce against `git merge-file -p` per triple and against libgit2 called directly.
    static func manyTriples(_ scale: Scale) throws -> [Row] {
        var random = SeededRandom(seed: 2026)
        let triples = (0..<scale.triples).map { _ in Corpus.triple(lines: 300, &random) }
        // A merge that fails or does not merge (nil: binary) would time nothing; it fails the row, naming the triple.
        let truce = try bestOf(3) {
            try concurrentlyPerform(triples.count, workers: scale.cores) { index in
                let merged: TextMergeResult?
                do {
                    merged = try TextMerge.merge(base: triples[index].base, ours: triples[index].ours, theirs: triples[index].theirs)
                } catch {
                    throw BenchFailure("three-way merge of triple \(index) failed: \(error)")
                }
                if merged == nil { throw BenchFailure("three-way merge of triple \(index) gave no result: the corpus is not text") }
            }
        }
        let limit = try bestOf(3) {
            try concurrentlyPerform(triples.count, workers: scale.cores) { index in
                let (base, ours, theirs) = triples[index]
                let length = base.withUnsafeBytes { b in
                    ours.withUnsafeBytes { o in
                        theirs.withUnsafeBytes { t in
                            truce_bench_merge_file(b.baseAddress, b.count, o.baseAddress, o.count, t.baseAddress, t.count)
                        }
                    }
                }
                if length < 0 { throw BenchFailure("libgit2's git_merge_file failed on triple \(index)") }
            }
        }
        let directory = scratchDirectory("merge")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (index, triple) in triples.enumerated() {
            writeFile("\(directory)/\(index).base", triple.base)
            writeFile("\(directory)/\(index).ours", triple.ours)
            writeFile("\(directory)/\(index).theirs", triple.theirs)
        }
        let git = try seconds {
            try concurrentlyPerform(triples.count, workers: scale.cores) { index in
                // git merge-file -p exits with its number of conflicts; only a git that did not run or died fails.
                let status = runChild("git", ["-C", directory, "merge-file", "-p", "\(index).ours", "\(index).base", "\(index).theirs"]).status
                if !(0...127).contains(status) { throw BenchFailure("git merge-file on triple \(index) did not run to the end (status \(status))") }
            }
        }
        return [
            Row(
                work: "three-way merge, \(triples.count) triples of 300 lines (\(scale.cores) cores)", truce: format(truce),
                baseline: "git merge-file -p per triple: \(format(git))", ratio: git / truce, target: "≥ 20× faster", met: git / truce >= 20),
            Row(
                work: "  the same, against libgit2 git_merge_file in a C loop", truce: format(truce), baseline: "C loop: \(format(limit))",
                ratio: truce / limit, target: "≤ 1.2× the limit", met: truce / limit <= 1.2),
        ]
    }

    /// One large triple: Truce against one `git merge-file -p` (the same xdiff algorithm: parity is the limit).
    static func largeTriple(_ scale: Scale) throws -> [Row] {
        var random = SeededRandom(seed: 50)
        let triple = Corpus.largeTriple(bytes: scale.largeBytes, &random)
        let truce = try bestOf(2) { _ = try TextMerge.merge(base: triple.base, ours: triple.ours, theirs: triple.theirs) }
        let directory = scratchDirectory("large")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        writeFile(directory + "/base", triple.base)
        writeFile(directory + "/ours", triple.ours)
        writeFile(directory + "/theirs", triple.theirs)
        let git = bestOf(2) { runChild("git", ["-C", directory, "merge-file", "-p", "ours", "base", "theirs"]) }
        return [
            Row(
                work: "three-way merge of one \(scale.largeBytes / 1_000_000) MB triple", truce: format(truce),
                baseline: "git merge-file -p: \(format(git))", ratio: git / truce, target: "≥ 0.9× git's speed", met: git / truce >= 0.9)
        ]
    }

    /// Peak memory of `truce merge-file` on a large document, against the document's size.
    static func memory(_ scale: Scale) throws -> [Row] {
        var random = SeededRandom(seed: 100)
        let triple = Corpus.largeTriple(bytes: scale.memoryBytes, &random)
        let directory = scratchDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        writeFile(directory + "/base", triple.base)
        writeFile(directory + "/ours", triple.ours)
        writeFile(directory + "/theirs", triple.theirs)
        let labels = ["-L", "ours", "-L", "base", "-L", "theirs"]
        let truce = runChildMeasuringPeak(
            truceExecutable(), ["merge-file", "-p"] + labels + [directory + "/ours", directory + "/base", directory + "/theirs"])
        let git = runChildMeasuringPeak("git", ["-C", directory, "merge-file", "-p"] + labels + ["ours", "base", "theirs"])
        let ratio = Double(truce.peakBytes) / Double(triple.base.count)
        // A truce that did not run (not built next to the bench) or merged other bytes than git measures nothing.
        let merged = truce.status >= 0 && truce.status == git.status && truce.output == git.output && truce.peakBytes > 0
        return [
            Row(
                work: "peak memory merging a \(triple.base.count / 1_000_000) MB document",
                truce: merged ? "\(truce.peakBytes / 1_000_000) MB" : "failed (exit \(truce.status), \(truce.output.count) bytes)",
                baseline: "input \(triple.base.count / 1_000_000) MB (git: \(git.peakBytes / 1_000_000) MB)",
                ratio: ratio, target: "≤ 5× the input, git's bytes", met: merged && ratio <= 5)
        ]
    }
}

/// The `truce` executable built next to this one.
func truceExecutable() -> String {
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("truce").path
}
