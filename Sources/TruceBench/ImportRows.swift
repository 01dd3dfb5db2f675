import Foundation
import Testbed
import Truce

enum ImportRows {
    /// Importing a folder of files into a new store against `git add -A && git commit` of the same folder in a new repository.
    ///
    /// Truce's import is durable when it returns (one fsynced pack, fsynced
    /// refs and reflogs). git runs twice on fresh copies: with its defaults,
    /// which fsync neither loose objects nor refs (the target), and with
    /// `core.fsync=all` in batch mode, git's own way to be durable at the end.
    static func folder(_ scale: Scale) throws -> [Row] {
        let directory = scratchDirectory("import")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = directory + "/files"
        var random = SeededRandom(seed: 15)
        let perFolder = 100
        for index in 0..<scale.importedFiles {
            let subfolder = "\(folder)/d\(index / perFolder)"
            if index % perFolder == 0 { try FileManager.default.createDirectory(atPath: subfolder, withIntermediateDirectories: true) }
            writeFile("\(subfolder)/f\(index).txt", Data(Corpus.lines(8, &random).joined().utf8))
        }
        shell("for copy in git durable; do cp -r files $copy && git -C $copy init -q; done", directory: directory)

        let store = try DocumentStore(directory: URL(fileURLWithPath: directory + "/truce"), mode: .createNew)
        var report: ImportReport?
        let truce = try seconds { report = try store.importDocumentsOnCallingThread(from: .folder(at: folder), device: "bench", date: Date()) }
        func gitImport(_ copy: String, options: String) -> Double {
            let git = "git -c user.name=bench -c user.email=bench@truce \(options)"
            return seconds { shell("\(git) add -A && \(git) commit -q -m import", directory: directory + "/" + copy) }
        }
        let git = gitImport("git", options: "")
        let durableGit = gitImport("durable", options: "-c core.fsync=all -c core.fsyncMethod=batch")
        let imported = report?.newVersions ?? 0
        let committed = runChild("git", ["-C", directory + "/git", "ls-tree", "-r", "--name-only", "HEAD"]).output.count(where: { $0 == 0x0A })
        return [
            Row(
                work: "import a folder of \(scale.importedFiles) files into a new store (\(imported) versions; git committed \(committed))",
                truce: format(truce), baseline: "git add -A && git commit: \(format(git))", ratio: git / truce,
                target: "≥ 0.5× git's speed", met: imported == scale.importedFiles && committed == scale.importedFiles && git / truce >= 0.5),
            Row(
                work: "  the same, against git with core.fsync=all (batch)", truce: format(truce),
                baseline: "durable git: \(format(durableGit))", ratio: durableGit / truce, target: "(reference; every file imported)",
                met: imported == scale.importedFiles),
        ]
    }
}
