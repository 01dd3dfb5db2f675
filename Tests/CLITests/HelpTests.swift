import Testing
import TestSupport

struct HelpTests {
    static let commands = ["init", "save", "cat", "delete", "versions", "status", "log", "explain", "import", "export", "help"]

    @Test func helpListsEveryCommand() throws {
        let result = try truce(["help"])
        #expect(result.status == 0)
        for command in Self.commands { #expect(result.output.contains("\n  \(command) ")) }
        #expect(result.output.contains("Exit codes"))
    }

    @Test(arguments: commands)
    func helpForOneCommandShowsItsUsage(command: String) throws {
        for words in [["help", command], [command, "--help"]] {
            let result = try truce(words)
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("usage: truce"))
            #expect(result.output.contains("--store"))
        }
    }

    @Test func noCommandOrAnUnknownOneIsBadUsage() throws {
        let bare = try truce([])
        #expect(bare.status == 2)
        #expect(bare.output.contains("usage:"))
        let unknown = try truce(["frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.errorLines == ["truce: unknown command 'frobnicate'; see 'truce help'"])
        #expect(try truce(["help", "frobnicate"]).status == 2)
    }
}
