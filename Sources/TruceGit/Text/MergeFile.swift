internal import CLibgit2
import Foundation

/// libgit2's three-way merge of plain text, the one `git merge-file` runs; TruceCore's `TextMerge` is the public face.
package enum MergeFile {
    /// How a conflict hunk shows the sides (`merge.conflictStyle`).
    package enum Style: Sendable {
        case merge, diff3, zdiff3
    }

    /// How hunks changed on both sides are settled (`--ours`, `--theirs`, `--union`; `normal` leaves markers).
    package enum Favor: Sendable {
        case normal, ours, theirs, union
    }

    /// The knobs of one merge; the defaults print what `git merge-file -p` prints.
    package struct Options: Sendable {
        package var style: Style = .merge
        package var favor: Favor = .normal
        /// The length of a conflict marker; below 1 means 7, as in git.
        package var markerSize = 7
        package var oursLabel = "ours"
        package var baseLabel = "base"
        package var theirsLabel = "theirs"
        /// Folds conflicts separated only by lines without a letter or digit into one (`XDL_MERGE_ZEALOUS_ALNUM`).
        package var coalescesNonAlphanumericRegions = true
        package var diffAlgorithm: LineDiff.Algorithm = .myers

        package init() {}
    }

    /// The merged bytes, conflict markers included, and the number of conflict hunks.
    package struct Result: Sendable {
        package let content: Data
        package let conflictCount: Int
    }

    /// The largest marker size libgit2 accepts (its field is an `unsigned short`).
    package static let maximumMarkerSize = Int(UInt16.max)

    /// Merges the changes from `base` to `ours` and from `base` to `theirs`.
    ///
    /// Returns nil when any input is binary (a NUL byte in its first 8000 bytes, git's
    /// rule, or more than 1023 MiB), whatever the favor: the caller picks another way.
    /// Throws when `options.markerSize` is above `maximumMarkerSize` or libgit2 fails.
    package static func merge(base: Data, ours: Data, theirs: Data, options: Options = .init()) throws(GitError) -> Result? {
        guard options.markerSize <= maximumMarkerSize else {
            throw GitError(
                operation: "merge text", code: GIT_EINVALID.rawValue, errorClass: 0,
                message: "conflict marker size \(options.markerSize) is above \(maximumMarkerSize)")
        }
        if [base, ours, theirs].contains(where: isBinary) { return nil }
        let markerSize = options.markerSize > 0 ? options.markerSize : Int(GIT_MERGE_CONFLICT_MARKER_SIZE)
        let labels = (ours: options.oursLabel, base: options.baseLabel, theirs: options.theirsLabel)
        guard let merged = try run(base: base, ours: ours, theirs: theirs, options: options, markerSize: markerSize, labels: labels) else {
            return nil
        }
        guard !merged.automergeable else { return Result(content: merged.content, conflictCount: 0) }
        return Result(
            content: merged.content,
            conflictCount: try conflictCount(
                merged.content, base: base, ours: ours, theirs: theirs,
                options: options, markerSize: markerSize))
    }

    /// Counts conflict hunks, which libgit2 does not report (it says only whether there was one).
    ///
    /// An opening marker is a line that starts with `markerSize` '<'. When some input line
    /// starts with as many, or a label holds a newline, markers and content could be confused,
    /// so the merge runs again on inputs with '#' put before every line: that changes no line
    /// equality nor whether a line holds a letter or digit, the only things xdiff's merge looks
    /// at, so it finds the same hunks, and then only markers start with '<'.
    private static func conflictCount(
        _ merged: Data, base: Data, ours: Data, theirs: Data,
        options: Options, markerSize: Int
    ) throws(GitError) -> Int {
        let longestRun = [base, ours, theirs].map(longestLeadingRun).max() ?? 0
        let labelsAreOneLine = ![options.oursLabel, options.baseLabel, options.theirsLabel].contains { $0.utf8.contains(UInt8(ascii: "\n")) }
        if markerSize > longestRun && labelsAreOneLine {
            return linesStarting(with: markerSize, in: merged)
        }
        let escaped = try run(
            base: prefixingLines(base), ours: prefixingLines(ours), theirs: prefixingLines(theirs),
            options: options, markerSize: Int(GIT_MERGE_CONFLICT_MARKER_SIZE), labels: ("", "", ""))
        // Only an input grown past xdiff's size limit by the '#'s comes back binary; count what the first merge shows.
        return escaped.map { linesStarting(with: 1, in: $0.content) } ?? linesStarting(with: markerSize, in: merged)
    }

    /// One `git_merge_file` call; nil when libgit2 found the input binary.
    private static func run(
        base: Data, ours: Data, theirs: Data, options: Options, markerSize: Int,
        labels: (ours: String, base: String, theirs: String)
    ) throws(GitError) -> (content: Data, automergeable: Bool)? {
        Libgit2.ensureInitialized()
        var mergeOptions = git_merge_file_options()
        try check(git_merge_file_options_init(&mergeOptions, UInt32(GIT_MERGE_FILE_OPTIONS_VERSION)), "prepare text merge")
        mergeOptions.favor =
            switch options.favor {
            case .normal: GIT_MERGE_FILE_FAVOR_NORMAL
            case .ours: GIT_MERGE_FILE_FAVOR_OURS
            case .theirs: GIT_MERGE_FILE_FAVOR_THEIRS
            case .union: GIT_MERGE_FILE_FAVOR_UNION
            }
        var flags =
            switch options.style {
            case .merge: GIT_MERGE_FILE_STYLE_MERGE.rawValue
            case .diff3: GIT_MERGE_FILE_STYLE_DIFF3.rawValue
            case .zdiff3: GIT_MERGE_FILE_STYLE_ZDIFF3.rawValue
            }
        if options.coalescesNonAlphanumericRegions { flags |= GIT_MERGE_FILE_SIMPLIFY_ALNUM.rawValue }
        switch options.diffAlgorithm {
        case .myers: break
        case .minimal: flags |= GIT_MERGE_FILE_DIFF_MINIMAL.rawValue
        case .patience: flags |= GIT_MERGE_FILE_DIFF_PATIENCE.rawValue
        }
        mergeOptions.flags = flags
        mergeOptions.marker_size = UInt16(markerSize)

        // The option and input structs point into Swift memory: every scope stays open until libgit2 returns.
        let outcome: Swift.Result<git_merge_file_result, GitError> = withInput(base) { baseInput in
            withInput(ours) { oursInput in
                withInput(theirs) { theirsInput in
                    labels.base.withCString { baseLabel in
                        labels.ours.withCString { oursLabel in
                            labels.theirs.withCString { theirsLabel in
                                var baseInput = baseInput, oursInput = oursInput, theirsInput = theirsInput
                                mergeOptions.ancestor_label = baseLabel
                                mergeOptions.our_label = oursLabel
                                mergeOptions.their_label = theirsLabel
                                var result = git_merge_file_result()
                                let code = git_merge_file(&result, &baseInput, &oursInput, &theirsInput, &mergeOptions)
                                // Read right away: libgit2's last error is per thread and the next call may replace it.
                                if code < 0 { return .failure(GitError.last("merge text", code: code)) }
                                return .success(result)
                            }
                        }
                    }
                }
            }
        }
        var result = try outcome.get()
        defer { git_merge_file_result_free(&result) }
        guard let pointer = result.ptr else {
            // libgit2 gives no buffer for binary input (never automergeable then); a clean empty merge may have none too.
            return result.automergeable != 0 ? (Data(), true) : nil
        }
        return (Data(bytes: pointer, count: result.len), result.automergeable != 0)
    }

    /// Calls `body` with a libgit2 input describing `data`, valid only inside `body`.
    private static func withInput<R>(_ data: Data, _ body: (git_merge_file_input) -> R) -> R {
        data.withUnsafeBytes { buffer in
            // xdiff is handed a real pointer even for an empty input, never NULL.
            withUnsafePointer(to: CChar(0)) { empty in
                var input = git_merge_file_input()
                _ = git_merge_file_input_init(&input, UInt32(GIT_MERGE_FILE_INPUT_VERSION))
                input.ptr = buffer.baseAddress.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) } ?? empty
                input.size = buffer.count
                return body(input)
            }
        }
    }

    /// True for content git will not merge as text: a NUL in the first 8000 bytes, or more than 1023 MiB.
    package static func isBinary(_ data: Data) -> Bool {
        // memchr: iterating Data byte by byte costs more than the merge of a small file.
        data.count > maximumTextSize
            || data.withUnsafeBytes { memchr($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, 0, min($0.count, 8000)) != nil }
    }

    /// xdiff's size limit (`MAX_XDIFF_SIZE` in git, `GIT_XDIFF_MAX_SIZE` in libgit2): 1023 MiB.
    package static let maximumTextSize = 1023 * 1024 * 1024

    /// The longest run of '<' that starts a line of `data`.
    private static func longestLeadingRun(_ data: Data) -> Int {
        var longest = 0
        forEachLeadingRun(in: data) { longest = max(longest, $0) }
        return longest
    }

    /// The number of lines of `data` that start with at least `count` '<'.
    private static func linesStarting(with count: Int, in data: Data) -> Int {
        var lines = 0
        forEachLeadingRun(in: data) { if $0 >= count { lines += 1 } }
        return lines
    }

    /// Calls `body` with the length of the run of '<' that starts each line of `data` that starts with one.
    private static func forEachLeadingRun(in data: Data, _ body: (Int) -> Void) {
        data.withUnsafeBytes { bytes in
            var run = 0
            var atLineStart = true
            for byte in bytes {
                if atLineStart && byte == UInt8(ascii: "<") {
                    run += 1
                    continue
                }
                if run > 0 { body(run) }
                atLineStart = byte == UInt8(ascii: "\n")
                run = 0
            }
            if run > 0 { body(run) }
        }
    }

    /// `data` with '#' before every line, so that no line starts with '<'.
    private static func prefixingLines(_ data: Data) -> Data {
        data.withUnsafeBytes { bytes in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 16 + 1)
            var atLineStart = true
            for byte in bytes {
                if atLineStart { out.append(UInt8(ascii: "#")) }
                out.append(byte)
                atLineStart = byte == UInt8(ascii: "\n")
            }
            return Data(out)
        }
    }
}
