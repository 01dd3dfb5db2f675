import Foundation
import Truce

/// A git mergetool as `git mergetool` runs one: a shell command that reads the files `$LOCAL`, `$BASE`, `$REMOTE`
/// and writes the merge into `$MERGED`, and whether its exit status says if it succeeded.
///
/// The command comes from the store's own config, `mergetool.<name>.cmd`
/// (and `mergetool.<name>.trustExitCode`, false unless set), else from git's
/// own command line for the common tools. Config is local: like an external
/// driver, a mergetool is never taken from a synced replica.
struct MergeTool: Equatable {
    let name: String
    /// Shell text run with `/bin/sh -c`; it names the files only through the variables, never as text of its own.
    let command: String
    /// True when a non-zero exit status means the merge failed; otherwise a MERGED left as it was means it did.
    let trustsExitCode: Bool
    /// The program a built-in tool runs, exported as `$TRUCE_MERGETOOL` (`mergetool.<name>.path`, or found in `PATH`).
    var program: String?

    /// The built-in tools, with git's command lines (git's `mergetools/` scripts): `$TRUCE_MERGETOOL` is the program,
    /// `mergetool.<name>.path` or its usual name.
    static func builtIn(_ name: String, hasBase: Bool) -> (command: String, program: String, trustsExitCode: Bool)? {
        switch name {
        case "vimdiff", "nvimdiff", "gvimdiff":
            let program = ["vimdiff": "vim", "nvimdiff": "nvim", "gvimdiff": "gvim"][name]!
            // git's default layout, "(LOCAL,BASE,REMOTE)/MERGED"; without a base its BASE window is closed.
            let layout =
                hasBase
                ? "echo | split | vertical split | 1b | wincmd l | vertical split | 2b | wincmd l | 3b | wincmd j | 4b | tabdo windo diffthis"
                : "echo | split | vertical split | 1b | wincmd l | vertical split | quit | wincmd l | 2b | wincmd j | 3b | tabdo windo diffthis"
            let files = hasBase ? "\"$LOCAL\" \"$BASE\" \"$REMOTE\" \"$MERGED\"" : "\"$LOCAL\" \"$REMOTE\" \"$MERGED\""
            return ("\"$TRUCE_MERGETOOL\" -f -c \"\(layout)\" -c \"tabfirst\" \(files)", program, true)
        case "meld":
            return ("\"$TRUCE_MERGETOOL\" --output=\"$MERGED\" \"$LOCAL\" \"$BASE\" \"$REMOTE\"", "meld", false)
        case "kdiff3":
            let command =
                hasBase
                ? "\"$TRUCE_MERGETOOL\" --auto --L1 \"$MERGED (Base)\" --L2 \"$MERGED (Local)\" --L3 \"$MERGED (Remote)\" -o \"$MERGED\" \"$BASE\" \"$LOCAL\" \"$REMOTE\" >/dev/null 2>&1"
                : "\"$TRUCE_MERGETOOL\" --auto --L1 \"$MERGED (Local)\" --L2 \"$MERGED (Remote)\" -o \"$MERGED\" \"$LOCAL\" \"$REMOTE\" >/dev/null 2>&1"
            return (command, "kdiff3", true)
        case "vscode", "code":
            return ("\"$TRUCE_MERGETOOL\" --wait --merge \"$REMOTE\" \"$LOCAL\" \"$BASE\" \"$MERGED\"", "code", false)
        default:
            return nil
        }
    }

    static let builtInNames = ["vimdiff", "nvimdiff", "gvimdiff", "meld", "kdiff3", "vscode (or code)"]

    /// The tool called `name` for a store whose config is `config`: its own `mergetool.<name>.cmd`, else a built-in.
    /// Throws `InputError` for a name that is neither, or a built-in whose program is not installed.
    static func named(_ name: String, config: (String) throws -> String?, hasBase: Bool) throws -> MergeTool {
        let trust = try config("mergetool.\(name).trustExitCode").map { value in
            switch value.lowercased() {
            case "true", "yes", "on", "1": return true
            case "false", "no", "off", "0", "": return false
            default: throw InputError("mergetool.\(name).trustExitCode is '\(value)', not a boolean")
            }
        }
        if let command = try config("mergetool.\(name).cmd"), !command.isEmpty {
            return MergeTool(name: name, command: command, trustsExitCode: trust ?? false)
        }
        guard let builtIn = builtIn(name, hasBase: hasBase) else {
            throw InputError(
                "unknown merge tool '\(name)': set mergetool.\(name).cmd in the store's config, or use one of \(builtInNames.joined(separator: ", "))"
            )
        }
        let configured = try config("mergetool.\(name).path").flatMap { $0.isEmpty ? nil : $0 }
        guard let program = AttachedProcess.find(configured ?? builtIn.program) else {
            throw InputError("merge tool '\(name)' needs '\(configured ?? builtIn.program)', which is not installed (set mergetool.\(name).path)")
        }
        return MergeTool(name: name, command: builtIn.command, trustsExitCode: trust ?? builtIn.trustsExitCode, program: program)
    }
}
