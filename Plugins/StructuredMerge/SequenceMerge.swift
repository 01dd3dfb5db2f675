/// The three-way merge of two edited sequences of values against their base.
///
/// Each side's changes are the runs of the base it replaced (an insertion is
/// an empty run). Changes at different places are all applied, a removal next
/// to an insertion included; the same change on both sides counts once; runs
/// that overlap, an insertion strictly inside the other side's replaced run,
/// or two different insertions at one place are a conflict.
enum SequenceMerge {
    /// One side's change: base elements `start..<end` replaced by `replacement`, the side's elements from `sideStart`.
    struct Edit: Equatable {
        let start: Int
        let end: Int
        let replacement: [StructuredValue]
        let sideStart: Int

        /// The same change: where each side's replacement stands in the side does not matter.
        static func == (lhs: Edit, rhs: Edit) -> Bool {
            lhs.start == rhs.start && lhs.end == rhs.end && lhs.replacement == rhs.replacement
        }
    }

    /// Where an element of the merge comes from: which version, at which index there.
    enum Origin: Equatable {
        case ours(Int)
        case theirs(Int)
        case base(Int)

        /// The same element with ours and theirs named the other way round.
        var swappingSides: Origin {
            switch self {
            case .ours(let index): .theirs(index)
            case .theirs(let index): .ours(index)
            case .base: self
            }
        }

        var index: Int {
            switch self {
            case .ours(let index), .theirs(let index), .base(let index): index
            }
        }
    }

    /// Above this many cells the longest-common-subsequence table is not built; the differing middle is one change.
    static let tableLimit = 4_000_000

    /// The merged sequence, as where each element comes from; nil when the sides' changes conflict.
    static func merge(base: [StructuredValue], ours: [StructuredValue], theirs: [StructuredValue]) -> [Origin]? {
        let ourEdits = edits(from: base, to: ours), theirEdits = edits(from: base, to: theirs)
        for a in ourEdits {
            for b in theirEdits where a != b && conflicts(a, b) { return nil }
        }
        var all = ourEdits.map { (edit: $0, isOurs: true) }
        for edit in theirEdits where !ourEdits.contains(edit) { all.append((edit, false)) }
        // At one start, an insertion goes before a run replaced there.
        all.sort { ($0.edit.start, $0.edit.end) < ($1.edit.start, $1.edit.end) }
        let kept = keptElements(base: base, ours: ours, ourEdits: ourEdits)
        var result: [Origin] = []
        var position = 0
        for (edit, isOurs) in all {
            result += kept[position..<edit.start]
            let replaced = edit.sideStart..<edit.sideStart + edit.replacement.count
            result += replaced.map { isOurs ? .ours($0) : .theirs($0) }
            position = edit.end
        }
        result += kept[position...]
        return result
    }

    /// The base's elements, each where ours kept it: unchanged parts keep the current layout.
    private static func keptElements(base: [StructuredValue], ours: [StructuredValue], ourEdits: [Edit]) -> [Origin] {
        var kept = base.indices.map { Origin.base($0) }
        var shift = 0
        var next = 0
        for index in base.indices {
            // Edits ending at or before this element (an insertion right before it included) have moved it.
            while next < ourEdits.count, ourEdits[next].end <= index {
                shift += ourEdits[next].replacement.count - (ourEdits[next].end - ourEdits[next].start)
                next += 1
            }
            let inside = next < ourEdits.count && ourEdits[next].start <= index && index < ourEdits[next].end
            if !inside, ours.indices.contains(index + shift) { kept[index] = .ours(index + shift) }
        }
        return kept
    }

    private static func conflicts(_ a: Edit, _ b: Edit) -> Bool {
        let aInserts = a.start == a.end, bInserts = b.start == b.end
        switch (aInserts, bInserts) {
        case (true, true): return a.start == b.start
        case (true, false): return b.start < a.start && a.start < b.end
        case (false, true): return a.start < b.start && b.start < a.end
        case (false, false): return a.start < b.end && b.start < a.end
        }
    }

    /// The changes that turn `base` into `side`, from a longest common subsequence.
    static func edits(from base: [StructuredValue], to side: [StructuredValue]) -> [Edit] {
        var prefix = 0
        while prefix < base.count, prefix < side.count, base[prefix] == side[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < base.count - prefix, suffix < side.count - prefix, base[base.count - 1 - suffix] == side[side.count - 1 - suffix] {
            suffix += 1
        }
        let old = Array(base[prefix..<base.count - suffix]), new = Array(side[prefix..<side.count - suffix])
        if old.isEmpty && new.isEmpty { return [] }
        if old.isEmpty || new.isEmpty || old.count * new.count > tableLimit {
            return [Edit(start: prefix, end: prefix + old.count, replacement: new, sideStart: prefix)]
        }
        // Elements become small integers once, so the table compares integers.
        var numbers: [StructuredValue: Int32] = [:]
        let a = old.map { value in
            numbers[value]
                ?? {
                    numbers[value] = Int32(numbers.count)
                    return Int32(numbers.count - 1)
                }()
        }
        let b = new.map { value in
            numbers[value]
                ?? {
                    numbers[value] = Int32(numbers.count)
                    return Int32(numbers.count - 1)
                }()
        }
        let n = a.count, m = b.count, width = m + 1
        var table = [Int32](repeating: 0, count: (n + 1) * width)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                table[i * width + j] =
                    a[i] == b[j]
                    ? table[(i + 1) * width + j + 1] + 1
                    : max(table[(i + 1) * width + j], table[i * width + j + 1])
            }
        }
        var edits: [Edit] = []
        var i = 0, j = 0
        var runStart: (Int, Int)?
        func close(_ i: Int, _ j: Int) {
            if let (si, sj) = runStart {
                edits.append(Edit(start: prefix + si, end: prefix + i, replacement: Array(new[sj..<j]), sideStart: prefix + sj))
            }
            runStart = nil
        }
        while i < n || j < m {
            if i < n, j < m, a[i] == b[j] {
                close(i, j)
                i += 1
                j += 1
            } else {
                if runStart == nil { runStart = (i, j) }
                if j < m, i == n || table[i * width + j + 1] >= table[(i + 1) * width + j] { j += 1 } else { i += 1 }
            }
        }
        close(i, j)
        return edits
    }
}
