import Foundation
import TestSupport
import Testing

/// The writers of a store that crash tests run: each on a small store made for it, as one `truce` command.
enum StoreWriter: String, CaseIterable, CustomTestStringConvertible {
    case firstSave = "save of a new document"
    case save = "save replacing the head"
    case firstLoggedSave = "first logged save (the log made)"
    case loggedSave = "logged save and its checkpoint"
    case batch = "import (a batch)"
    case resolve = "resolution"
    case sync = "sync adopting"
    case prune = "prune --now"
    case pruneMany = "prune --now of many reflogs (one syncfs)"

    var testDescription: String { rawValue }

    /// True for the writers that may drop a deleted document's versions: the prunes.
    var dropsDeletedDocuments: Bool { self == .prune || self == .pruneMany }

    /// Every writer, or those `TRUCE_TEST_WRITERS` names (case names, comma-separated): to replay one in a heavy run.
    static let selected: [StoreWriter] = {
        guard let names = ProcessInfo.processInfo.environment["TRUCE_TEST_WRITERS"]?.split(separator: ",") else { return allCases }
        return allCases.filter { writer in names.contains { String(describing: writer) == $0 } }
    }()

    /// A store ready for one writer, the command that performs it, and everything else it needs (a hub, a folder to
    /// import), all in one directory.
    final class Setup {
        let directory: TemporaryDirectory
        var store: String { directory.file("store") }
        var arguments: [String] = []
        var input = Data()
        /// The environment the command runs with: the logged writers ask the command line to save through the log.
        var environment: [String: String] = [:]
        /// The documents the command writes, for a next writer of the same ones.
        var documents: [String] = []

        init(directory: TemporaryDirectory = TemporaryDirectory("truce-writer")) { self.directory = directory }

        /// A copy of the whole setup (store, hub, folder) in a directory of its own, its paths pointing into it.
        func copy() throws -> Setup {
            let copy = Setup()
            let result = try run("/bin/cp", ["-a", directory.path + "/.", copy.directory.path])
            guard result.status == 0 else { throw ReliabilityFailure("cp: \(result.errorOutput)") }
            copy.arguments = arguments.map { $0.replacingOccurrences(of: directory.path, with: copy.directory.path) }
            (copy.input, copy.documents, copy.environment) = (input, documents, environment)
            return copy
        }
    }

    /// Makes the store (three saves of two documents) and whatever this writer needs on top.
    func prepare() throws -> Setup {
        let setup = Setup()
        let store = try Reliability.makeStore(in: setup.directory, named: "store")
        // The setup's saves go straight into git; the logged writers turn the log on below, the others test git's path.
        _ = try git(["-C", store, "config", "truce.saveLog", "false"])
        func save(
            _ key: String, _ text: String, _ options: [String] = [], in path: String = store, environment: [String: String] = [:]
        ) throws -> String {
            let result = try truce(["save", key, "-", "--device", "laptop"] + options, store: path, input: .text(text), environment: environment)
            guard result.status == 0 else { throw ReliabilityFailure("setup save: \(result.errorOutput)") }
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let base = try save("a.md", "one\ntwo\nthree\n")
        try save("notes/b.txt", "b\n")
        try save("a.md", "one\ntwo\nthree\nfour\n")
        switch self {
        case .firstSave:
            setup.arguments = ["save", "deep/new/c.txt", "-", "--device", "laptop"]
            setup.input = .text("new\n")
            setup.documents = ["deep/new/c.txt"]
        case .save:
            setup.arguments = ["save", "a.md", "-", "--device", "phone"]
            setup.input = .text("one\n2\nthree\nfour\n")
            setup.documents = ["a.md"]
        case .firstLoggedSave:
            _ = try git(["-C", store, "config", "truce.saveLog", "true"])
            setup.environment = ["TRUCE_TEST_SAVE_LOG": "1"]
            setup.arguments = ["save", "a.md", "-", "--device", "phone"]
            setup.input = .text("the log's first\n")
            setup.documents = ["a.md"]
        case .loggedSave:
            _ = try git(["-C", store, "config", "truce.saveLog", "true"])
            setup.environment = ["TRUCE_TEST_SAVE_LOG": "1"]
            // Through the log, which it makes: the writer then appends to a log that has room.
            try save("notes/b.txt", "b, logged\n", environment: setup.environment)
            setup.arguments = ["save", "a.md", "-", "--device", "phone"]
            setup.input = .text("logged\n")
            setup.documents = ["a.md", "notes/b.txt"]
        case .batch:
            let folder = setup.directory.file("import")
            try FileManager.default.createDirectory(atPath: folder + "/docs", withIntermediateDirectories: true)
            for index in 0..<12 {
                try Data("imported \(index)\n".utf8).write(to: URL(fileURLWithPath: folder + "/docs/\(index).txt"))
            }
            try Data("one\ntwo\nthree\nfour\nimported\n".utf8).write(to: URL(fileURLWithPath: folder + "/a.md"))
            setup.arguments = ["import", folder, "--device", "laptop"]
            setup.documents = ["a.md", "docs/0.txt"]
        case .resolve:
            try save("a.md", "one\nTWO\nthree\n", ["--base", base])
            setup.arguments = ["resolve", "a.md", "--resolver", "overwrite-with-current", "--device", "laptop"]
            setup.documents = ["a.md"]
        case .sync:
            let hub = setup.directory.file("hub.git"), other = setup.directory.file("other")
            guard try git(["init", "-q", "--bare", hub]).status == 0, try truce(["init"], store: other).status == 0 else {
                throw ReliabilityFailure("setup: hub and other store")
            }
            _ = try truce(["sync", hub], store: store)
            _ = try truce(["sync", hub], store: other)
            try save("a.md", "one\ntwo\nthree\nfour\nfive\n", in: other)
            try save("notes/b.txt", "b from the other\n", ["--device", "phone"], in: other)
            try save("elsewhere/d.txt", "d\n", in: other)
            _ = try truce(["sync", hub], store: other)
            setup.arguments = ["sync", hub]
            setup.documents = ["a.md", "notes/b.txt", "elsewhere/d.txt"]
        case .prune:
            try save("gone.txt", "going\n")
            _ = try truce(["delete", "gone.txt", "--device", "laptop"], store: store)
            try save("notes/b.txt", "b again\n")
            setup.arguments = ["prune", "--now"]
            setup.documents = ["a.md", "notes/b.txt", "gone.txt"]
        case .pruneMany:
            // More rewritten reflogs than `DurableFiles.syncRemovalsOrRewrites` fsyncs one by one: one syncfs makes them durable.
            for index in 0..<15 { try save("many/\(index).txt", "\(index)\n") }
            try save("gone.txt", "going\n")
            _ = try truce(["delete", "gone.txt", "--device", "laptop"], store: store)
            setup.arguments = ["prune", "--now"]
            setup.documents = ["a.md", "many/0.txt", "gone.txt"]
        }
        return setup
    }
}
