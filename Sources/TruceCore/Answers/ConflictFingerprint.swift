import Foundation
internal import TruceGit

extension ConflictPoint {
    /// The point's identity by what it holds, not by its number: equal for the same disagreement wherever and
    /// whenever it comes back (another document, a reopening, another replica that made the same edits).
    ///
    /// For a hunk of lines it is computed as git's rerere computes a
    /// conflict's: the base and every label left out, the heads' texts sorted
    /// by their bytes, and SHA-1 over each text followed by a NUL byte; with N
    /// heads, every head's text. A conflict of one hunk therefore has the id
    /// of git's `rr-cache` entry for it. At a JSON Pointer path it is the path,
    /// then each head's value in canonical form (keys sorted), hashed alike.
    /// A head that deleted the document counts as a text no document holds.
    public var conflictID: String {
        var hash = SHA1()
        if let path {
            hash.update(Array(("json-pointer " + path).utf8) + [0])
        }
        for side in sortedSides {
            hash.update(side)
            hash.update([0])
        }
        return hash.finalizeHex()
    }

    /// The heads' texts as the id hashes them: canonical at a path, sorted by their bytes.
    var sortedSides: [[UInt8]] {
        let texts = sides.map { side -> [UInt8] in
            guard let text = side.text else { return Self.deletedSide }
            return path == nil ? Array(text) : Self.canonicalJSON(text)
        }
        return texts.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// What a deleted side hashes as: it holds NUL bytes, so no line of text is it.
    static let deletedSide: [UInt8] = [0] + Array("truce: deleted".utf8) + [0]

    /// `text` as JSON with sorted keys, when it parses; its bytes otherwise.
    private static func canonicalJSON(_ text: Data) -> [UInt8] {
        guard let value = try? JSONSerialization.jsonObject(with: text, options: [.fragmentsAllowed]),
            let canonical = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return Array(text) }
        return Array(canonical)
    }

    /// The identity of a whole conflict of several points, as git's rerere computes a file's: each point's sorted
    /// texts, in the document's order, hashed together. A conflict of one point has that point's id.
    public static func conflictID(of points: [ConflictPoint]) -> String {
        var hash = SHA1()
        for point in points {
            if let path = point.path { hash.update(Array(("json-pointer " + path).utf8) + [0]) }
            for side in point.sortedSides {
                hash.update(side)
                hash.update([0])
            }
        }
        return hash.finalizeHex()
    }
}
