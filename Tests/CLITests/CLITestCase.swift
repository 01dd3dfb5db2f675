import Foundation
import TestSupport
import Testing

/// A store made through the CLI, with helpers to run `truce` against it.
final class CLIStore: Sendable {
    let directory = TemporaryDirectory("truce-cli")
    var path: String { directory.file("store") }

    init() throws {
        let result = try truce(["init"], store: directory.file("store"))
        #expect(result.status == 0, "init failed: \(result.errorOutput)")
    }

    /// Runs `truce --store <this store> arguments…`.
    func run(_ arguments: String..., input: Data = Data()) throws -> ProcessResult {
        try truce(arguments, store: path, input: input)
    }

    /// Runs `truce --store <this store>` with `arguments`.
    func run(_ arguments: [String], input: Data = Data()) throws -> ProcessResult {
        try truce(arguments, store: path, input: input)
    }

    /// Saves `text` to `key` and returns the printed version id.
    @discardableResult
    func save(_ key: String, _ text: String, _ options: String...) throws -> String {
        let result = try truce(["save", key, "-"] + options, store: path, input: .text(text))
        #expect(result.status == 0, "save failed: \(result.errorOutput)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Decodes a command's `--json` output.
    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try truce(arguments + ["--json"], store: path)
        #expect(result.status == 0, "\(arguments) failed: \(result.errorOutput)")
        return try #require(JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }
}
