import Foundation
internal import TruceGit

/// A document with conflict markers, normalized as git's rerere normalizes one: in each hunk the labels and the
/// base section dropped and the sides sorted by their bytes, so the same disagreement always reads the same; and its
/// id, SHA-1 over every hunk's sorted sides, each followed by a NUL byte (git's `rr-cache` name).
///
/// What a document record keeps as its preimage, and what a conflict met
/// later is turned into before a recorded answer is replayed onto it.
struct ConflictImage: Equatable {
    /// The normalized text: what lies outside hunks as it was, each hunk as `<<<<<<<`, its sides with `=======`
    /// between them, `>>>>>>>`, markers without labels.
    let text: Data
    /// Every hunk's sides, sorted, in the document's order.
    let hunks: [[Data]]

    /// The image's id; nil when it holds no hunk.
    var id: String? {
        guard !hunks.isEmpty else { return nil }
        var hash = SHA1()
        for sides in hunks { for side in sides { hash.update(Array(side) + [0]) } }
        return hash.finalizeHex()
    }

    /// Normalizes `text`, whose hunks are between markers `markerSize` long (git's and libgit2's are 7).
    init(normalizing text: Data, markerSize: Int = 7) {
        enum State { case outside, side, base }
        func isMarker(_ line: Data, _ byte: UInt8) -> Bool {
            guard line.count >= markerSize, line.prefix(markerSize).allSatisfy({ $0 == byte }) else { return false }
            let rest = line.dropFirst(markerSize)
            return rest.isEmpty || rest.first == UInt8(ascii: " ") || rest.first == UInt8(ascii: "\n") || rest.first == UInt8(ascii: "\r")
        }
        var output = Data(), hunks: [[Data]] = [], sides: [Data] = [], state = State.outside
        let marker = { (byte: UInt8) in Data(repeating: byte, count: markerSize) + Data([UInt8(ascii: "\n")]) }
        for line in ConflictAnalysis.lines(of: text) {
            switch state {
            case .outside:
                if isMarker(line, UInt8(ascii: "<")) {
                    (state, sides) = (.side, [Data()])
                } else {
                    output.append(line)
                }
            case .side, .base:
                if isMarker(line, UInt8(ascii: "|")) {
                    state = .base
                } else if isMarker(line, UInt8(ascii: "=")) {
                    (state, sides) = (.side, sides + [Data()])
                } else if isMarker(line, UInt8(ascii: ">")) {
                    let sorted = sides.sorted { $0.lexicographicallyPrecedes($1) }
                    hunks.append(sorted)
                    output.append(marker(UInt8(ascii: "<")))
                    for (index, side) in sorted.enumerated() {
                        if index > 0 { output.append(marker(UInt8(ascii: "="))) }
                        output.append(side)
                    }
                    output.append(marker(UInt8(ascii: ">")))
                    state = .outside
                } else if state == .side {
                    sides[sides.count - 1].append(line)
                }
            }
        }
        self.text = output
        self.hunks = hunks
    }

    /// The document a recorded answer makes of this conflict, as git's rerere replays one: the three-way merge of
    /// the recorded preimage (base), this image (ours) and the recorded postimage (theirs); nil unless it is clean.
    func replaying(preimage: Data, postimage: Data) throws(TruceError) -> Data? {
        guard let merged = try TextMerge.merge(base: preimage, ours: text, theirs: postimage), merged.isClean else { return nil }
        return merged.content
    }
}
