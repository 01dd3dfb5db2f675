import Foundation

/// One conflict point edited in the person's own editor: the text goes to a temporary file, the editor runs on the
/// terminal with the file's path as its argument, and what it leaves becomes the answer.
struct PointEditor {
    /// The editor command, from the local environment only: `$VISUAL`, then `$EDITOR`, then `vi`, as git picks one.
    let command: String

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        command = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
    }

    /// The text the person left in the file after editing `text`; throws with the reason when the editor failed or
    /// left a conflict marker of `markers`' size in it.
    ///
    /// The command is run as git runs `core.editor`: `/bin/sh -c '<command>
    /// "$@"' <command> <file>`, so a command with options (`code --wait`)
    /// works, while the file's path reaches it only as an argument, never as
    /// text the shell reads.
    func edit(_ text: Data, named name: String, markers: ConflictMarkers) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("truce-edit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(Self.fileName(name))
        try text.write(to: file)
        let status = try AttachedProcess.run(
            ["/bin/sh", "-c", command + " \"$@\"", command, file.path], environment: ProcessInfo.processInfo.environment)
        guard status == 0 else { throw InputError("the editor '\(command)' exited with status \(status); the answer is unchanged") }
        let edited = try Data(contentsOf: file)
        if let line = markers.firstMarker(in: edited) {
            throw InputError("the edit still holds a conflict marker on line \(line); the answer is unchanged")
        }
        return edited
    }

    /// A file name for editing `name` (`todo.H1.md` for point H1 of `notes/todo.md`): the document's last segment,
    /// so that the editor highlights its syntax, with nothing a file system might refuse.
    static func fileName(_ name: String) -> String {
        let safe = name.unicodeScalars.map { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "." || scalar == "-" || scalar == "_"
                ? String(scalar) : "_"
        }.joined()
        return String(safe.prefix(100))
    }
}
