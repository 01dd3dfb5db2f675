import Foundation
internal import TruceGit

/// The knobs of a three-way text merge; the defaults print what `git merge-file -p` prints.
public struct TextMergeOptions: Sendable, Equatable {
    /// How conflict hunks are written.
    public var style: TextMergeOptions.ConflictStyle
    /// How conflicting hunks are settled; anything but `.normal` leaves no conflict.
    public var favor: TextMergeOptions.MergeFavor
    /// The length of a conflict marker (`<<<<<<<` is 7); below 1 means 7, as in git.
    public var markerSize: Int
    /// The label after `<<<<<<<`.
    public var oursLabel: String
    /// The label after `|||||||` (diff3 and zdiff3 only).
    public var baseLabel: String
    /// The label after `>>>>>>>`.
    public var theirsLabel: String
    /// True folds conflicts separated only by lines without a letter or digit into one, as
    /// `git merge-file` does; false keeps them apart, as `git merge` does.
    public var coalescesNonAlphanumericRegions: Bool
    /// The line diff the merge runs on each side (git's `--diff-algorithm`; libgit2 has no histogram).
    public var diffAlgorithm: TextMergeOptions.DiffAlgorithm

    /// Options for one merge; every parameter has git merge-file's default.
    public init(
        style: TextMergeOptions.ConflictStyle = .merge,
        favor: TextMergeOptions.MergeFavor = .normal,
        markerSize: Int = 7,
        oursLabel: String = "ours",
        baseLabel: String = "base",
        theirsLabel: String = "theirs",
        coalescesNonAlphanumericRegions: Bool = true,
        diffAlgorithm: TextMergeOptions.DiffAlgorithm = .myers
    ) {
        self.style = style
        self.favor = favor
        self.markerSize = markerSize
        self.oursLabel = oursLabel
        self.baseLabel = baseLabel
        self.theirsLabel = theirsLabel
        self.coalescesNonAlphanumericRegions = coalescesNonAlphanumericRegions
        self.diffAlgorithm = diffAlgorithm
    }

    /// The same options in the git layer's terms.
    var mergeFile: MergeFile.Options {
        var options = MergeFile.Options()
        options.style =
            switch style {
            case .merge: .merge
            case .diff3: .diff3
            case .zdiff3: .zdiff3
            }
        options.favor =
            switch favor {
            case .normal: .normal
            case .ours: .ours
            case .theirs: .theirs
            case .union: .union
            }
        (options.markerSize, options.coalescesNonAlphanumericRegions) = (markerSize, coalescesNonAlphanumericRegions)
        (options.oursLabel, options.baseLabel, options.theirsLabel) = (oursLabel, baseLabel, theirsLabel)
        options.diffAlgorithm = diffAlgorithm.lineDiff
        return options
    }
}

extension TextMergeOptions.DiffAlgorithm {
    /// The same algorithm in the git layer's terms.
    var lineDiff: LineDiff.Algorithm {
        switch self {
        case .myers: .myers
        case .minimal: .minimal
        case .patience: .patience
        }
    }
}

/// The outcome of a three-way text merge.
public struct TextMergeResult: Sendable, Equatable {
    /// The merged bytes, conflict markers included.
    public let content: Data
    /// The number of conflict hunks, the exit status `git merge-file` would give (before its cap of 127).
    public let conflictCount: Int

    /// True when no conflict hunk remains.
    public var isClean: Bool { conflictCount == 0 }

    /// A result with `content` holding `conflictCount` conflict hunks.
    public init(content: Data, conflictCount: Int) {
        self.content = content
        self.conflictCount = conflictCount
    }
}

/// The three-way merge of plain text that `git merge-file` runs (libgit2's), byte for byte, for resolvers and tools.
public enum TextMerge {
    /// The largest marker size libgit2 accepts (its field is an `unsigned short`).
    public static let maximumMarkerSize = MergeFile.maximumMarkerSize

    /// Merges the changes from `base` to `ours` and from `base` to `theirs`.
    ///
    /// Returns nil when any input is binary (a NUL byte in its first 8000 bytes, git's
    /// rule, or more than 1023 MiB), whatever the favor: the caller picks another way.
    /// Throws `TruceError.invalidConfiguration` when `options.markerSize` is above
    /// `maximumMarkerSize`, and `TruceError.storeFailure` when libgit2 fails.
    public static func merge(base: Data, ours: Data, theirs: Data, options: TextMergeOptions = .init()) throws(TruceError) -> TextMergeResult? {
        guard options.markerSize <= maximumMarkerSize else {
            throw .invalidConfiguration("conflict marker size \(options.markerSize) is above \(maximumMarkerSize)")
        }
        do {
            return try MergeFile.merge(base: base, ours: ours, theirs: theirs, options: options.mergeFile).map {
                TextMergeResult(content: $0.content, conflictCount: $0.conflictCount)
            }
        } catch {
            throw .storeFailure(error)
        }
    }

    /// True for content git will not merge as text: a NUL in the first 8000 bytes, or more than 1023 MiB.
    public static func isBinary(_ data: Data) -> Bool { MergeFile.isBinary(data) }
}

extension TextMergeOptions {
    /// How a conflict hunk shows the sides, as git's `merge.conflictStyle` names them.
    public enum ConflictStyle: String, Sendable, CaseIterable {
        /// Ours and theirs between `<<<<<<<`, `=======` and `>>>>>>>`.
        case merge
        /// Like `merge`, with the base's lines after a `|||||||` marker.
        case diff3
        /// Like `diff3`, with lines both sides share moved out of the hunk ("zealous diff3").
        case zdiff3
    }
}

extension TextMergeOptions {
    /// How hunks changed on both sides are settled, as `git merge-file --ours`, `--theirs` and `--union` do.
    public enum MergeFavor: String, Sendable, CaseIterable {
        /// Leave conflict markers.
        case normal
        /// Take our side of every conflicting hunk.
        case ours
        /// Take their side of every conflicting hunk.
        case theirs
        /// Take both sides, ours first, without markers.
        case union
    }
}

extension TextMergeOptions {
    /// The line diff a merge runs on each side, as git's `--diff-algorithm` names it (libgit2 has no histogram).
    public enum DiffAlgorithm: String, Sendable, CaseIterable {
        /// git's default.
        case myers
        /// Myers, spending extra time to find the smallest diff.
        case minimal
        /// Lines unique to both sides anchor the diff first.
        case patience
    }
}
