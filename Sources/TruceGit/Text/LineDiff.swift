internal import CLibgit2
import Foundation

/// One changed region between two texts, in 0-based line indexes.
package struct LineDiffHunk: Equatable, Sendable {
    /// First changed line of the old text; for a pure insertion, the index it is inserted before.
    package let oldStart: Int
    package let oldCount: Int
    package let newCount: Int
}

package enum LineDiff {
    /// The diff algorithms libgit2 offers, as git names them.
    package enum Algorithm: Sendable {
        case myers, minimal, patience
    }

    /// The changed regions from `old` to `new` with no context lines, as `git diff -U0` finds them.
    package static func hunks(from old: Data, to new: Data, algorithm: Algorithm = .myers) throws(GitError) -> [LineDiffHunk] {
        Libgit2.ensureInitialized()
        var options = git_diff_options()
        try check(git_diff_options_init(&options, UInt32(GIT_DIFF_OPTIONS_VERSION)), "prepare diff")
        options.context_lines = 0
        options.interhunk_lines = 0
        options.flags = GIT_DIFF_FORCE_TEXT.rawValue
        switch algorithm {
        case .myers: break
        case .minimal: options.flags |= GIT_DIFF_MINIMAL.rawValue
        case .patience: options.flags |= GIT_DIFF_PATIENCE.rawValue
        }
        var collected: [LineDiffHunk] = []
        let code = old.withUnsafeBytes { oldBytes in
            new.withUnsafeBytes { newBytes in
                withUnsafeMutablePointer(to: &collected) { sink in
                    git_diff_buffers(
                        oldBytes.baseAddress, oldBytes.count, nil, newBytes.baseAddress, newBytes.count, nil, &options,
                        nil, nil,
                        { _, hunk, payload in
                            guard let hunk = hunk?.pointee, let payload else { return 0 }
                            let sink = payload.assumingMemoryBound(to: [LineDiffHunk].self)
                            // git numbers lines from 1 and gives a pure insertion the line it follows.
                            let oldStart = hunk.old_lines == 0 ? Int(hunk.old_start) : Int(hunk.old_start) - 1
                            sink.pointee.append(
                                LineDiffHunk(
                                    oldStart: oldStart, oldCount: Int(hunk.old_lines),
                                    newCount: Int(hunk.new_lines)))
                            return 0
                        }, nil, sink)
                }
            }
        }
        try check(code, "diff texts")
        return collected
    }
}
