import Foundation
import Testbed

/// Realistic text: prose-like lines of words, as notes and source files have.
enum Corpus {
    static let words = [
        "the", "document", "version", "merge", "conflict", "device", "laptop", "phone", "notes", "todo", "write",
        "report", "by", "friday", "call", "meeting", "review", "draft", "section", "update", "fix", "list", "item",
        "swift", "git", "store", "resolve", "current", "base", "head", "change", "line", "text", "edit", "save",
    ]

    static func line(_ random: inout SeededRandom) -> String {
        (0..<random.int(3..<12)).map { _ in words[random.int(0..<words.count)] }.joined(separator: " ") + "\n"
    }

    static func lines(_ count: Int, _ random: inout SeededRandom) -> [String] { (0..<count).map { _ in line(&random) } }

    /// A (base, ours, theirs) triple of about `count` lines: each side edits, inserts and deletes a few lines,
    /// ours in the first half and theirs in the second, with an overlapping edit one time in ten.
    static func triple(lines count: Int, _ random: inout SeededRandom) -> (base: Data, ours: Data, theirs: Data) {
        let base = lines(count, &random)
        var ours = base, theirs = base
        for _ in 0..<random.int(2..<6) { ours[random.int(0..<count / 2)] = line(&random) }
        for _ in 0..<random.int(2..<6) { theirs[random.int(count / 2..<count)] = line(&random) }
        ours.insert(line(&random), at: random.int(0..<count / 2))
        theirs.remove(at: random.int(count / 2..<theirs.count))
        if random.int(0..<10) == 0 {
            let shared = random.int(0..<count / 2)
            ours[shared] = "ours " + line(&random)
            theirs[shared] = "theirs " + line(&random)
        }
        return (Data(base.joined().utf8), Data(ours.joined().utf8), Data(theirs.joined().utf8))
    }

    /// A large triple of about `bytes` bytes with edits spread through it.
    static func largeTriple(bytes: Int, _ random: inout SeededRandom) -> (base: Data, ours: Data, theirs: Data) {
        var base: [String] = []
        var size = 0
        while size < bytes {
            let line = line(&random)
            size += line.utf8.count
            base.append(line)
        }
        var ours = base, theirs = base
        let edits = max(10, base.count / 2000)
        for index in 0..<edits {
            let segment = base.count / edits
            ours[index * segment + random.int(0..<segment / 2)] = "ours " + line(&random)
            theirs[index * segment + segment / 2 + random.int(0..<segment / 2)] = "theirs " + line(&random)
        }
        return (Data(base.joined().utf8), Data(ours.joined().utf8), Data(theirs.joined().utf8))
    }
}
