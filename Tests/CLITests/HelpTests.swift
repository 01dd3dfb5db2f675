import TestSupport
import Testing

@testable import TruceCommandLine

@Suite(.timeLimit(.minutes(10))) struct HelpTests {
    /// Every command the CLI dispatches, read from its own table: a command added there is checked here too.
    static let commands = CommandLineTool.commands.map { $0.name }

    @Test func helpListsEveryCommand() throws {
        let result = try truce(["help"])
        #expect(result.status == 0)
        #expect(Self.commands.count > 1 && Set(Self.commands).count == Self.commands.count, "\(Self.commands)")
        // The rows under "commands:" up to the blank line, one per dispatched command, in the table's order.
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let rows = lines.drop { $0 != "commands:" }.dropFirst().prefix { !$0.isEmpty }
        #expect(rows.map { $0.split(separator: " ").first.map(String.init) ?? "" } == Self.commands, "\(result.output)")
        #expect(rows.allSatisfy { $0.hasPrefix("  ") })
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
