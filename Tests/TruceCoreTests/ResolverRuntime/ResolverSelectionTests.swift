import Foundation
import TestSupport
import Testing

@testable import TruceCore

/// A resolver that settles nothing, standing for any name a registry may hold.
struct NamedResolver: Resolver {
    let name: String
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome { .pass(reason: "test") }
}

@Suite(.timeLimit(.minutes(10))) struct ResolverSelectionTests {
    static let registry = ResolverRegistry(
        ["three-way", "list-conflicts", "union", "overwrite-with-current", "mine", "custom"].map(NamedResolver.init))
    static let attributes = """
        # comment
        *.md merge=three-way
        *.png -merge
        docs/*.txt merge=union
        **/generated/* merge=overwrite-with-current
        /root.txt merge
        *.bin binary
        [attr]mymacro merge=mine
        *.mac mymacro
        special.md !merge

        """

    @Test(arguments: [
        ("notes/a.md", "three-way", "info/attributes line 2: *.md merge=three-way"),
        ("a.png", "list-conflicts", "info/attributes line 3: *.png -merge"),
        ("docs/a.txt", "union", "info/attributes line 4: docs/*.txt merge=union"),
        ("docs/sub/a.txt", "three-way", "default: no attributes line sets merge for this key"),
        ("x/generated/y", "overwrite-with-current", "info/attributes line 5: **/generated/* merge=overwrite-with-current"),
        ("root.txt", "three-way", "info/attributes line 6: /root.txt merge"),
        ("sub/root.txt", "three-way", "default: no attributes line sets merge for this key"),
        ("a.bin", "list-conflicts", "info/attributes line 7: *.bin binary"),
        ("a.mac", "mine", "info/attributes line 9: *.mac mymacro"),
        ("special.md", "three-way", "default: no attributes line sets merge for this key"),
    ])
    func attributesPickTheResolverAndNameTheLine(key: String, resolver: String, source: String) throws {
        let test = try TestStore()
        try test.setAttributes(Self.attributes)
        let choice = try test.store.resolverChoice(for: DocumentKey(key), registry: Self.registry)
        #expect(choice.chain == [resolver])
        #expect(choice.source == source)
    }

    @Test func gitCheckAttrAgreesWithTruceOnATableOfKeys() throws {
        let test = try TestStore()
        try test.setAttributes(Self.attributes)
        let keys = [
            "notes/a.md", "a.png", "docs/a.txt", "docs/sub/a.txt", "x/generated/y", "generated/z", "root.txt", "sub/root.txt",
            "a.bin", "a.mac", "special.md", "plain", "deep/er/a.md", "with space.md",
        ]
        for key in keys {
            let line = try test.git("check-attr", "merge", "--", key).trimmingCharacters(in: .newlines)
            let gitValue = String(line.split(separator: ": ").last ?? "")
            let truceValue = try test.store.resolverChoice(for: DocumentKey(key), registry: Self.registry).attribute
            #expect(gitValue == truceValue.description, "\(key): git says \(gitValue), Truce \(truceValue)")
        }
    }

    @Test func fallbacksChainAndMergeDefaultApplies() throws {
        let test = try TestStore()
        try test.setConfig("resolver.three-way.fallback", "union")
        try test.setConfig("resolver.union.fallback", "list-conflicts")
        try test.setConfig("resolver.three-way.style", "diff3")
        let choice = try test.store.resolverChoice(for: "a.md", registry: Self.registry)
        #expect(choice.chain == ["three-way", "union", "list-conflicts"])
        #expect(choice.options["three-way"]?["style"] == "diff3")
        try test.setConfig("merge.default", "custom")
        #expect(try test.store.resolverChoice(for: "a.md", registry: Self.registry).chain == ["custom"])
        #expect(try test.store.resolverChoice(for: "a.md", registry: Self.registry, explicit: "union").chain == ["union", "list-conflicts"])
    }

    /// A name no resolver has, standing for one that has, with options of its own: routing picks it per path.
    @Test func aNameThatUsesAResolverHasItsOwnOptionsAndMustUseAResolverThatExists() throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=three-way\ncareful/*.md merge=careful\n")
        try test.setConfig("resolver.careful.uses", "three-way")
        try test.setConfig("resolver.careful.style", "diff3")
        let careful = try test.store.resolverChoice(for: "careful/a.md", registry: Self.registry)
        #expect(careful.chain == ["careful"])
        #expect(careful.resolvers["careful"]?.name == "three-way")
        #expect(careful.options["careful"]?["style"] == "diff3")
        let plain = try test.store.resolverChoice(for: "a.md", registry: Self.registry)
        #expect(plain.chain == ["three-way"] && plain.options["three-way"]?["style"] == nil)
        try test.setConfig("resolver.careful.uses", "nowhere")
        #expect(throws: TruceError.unknownResolver("nowhere", source: "resolver.careful.uses in config")) {
            try test.store.resolverChoice(for: "careful/a.md", registry: Self.registry)
        }
    }

    @Test func unknownNamesLoopsAndMalformedLinesAreClearErrors() throws {
        let test = try TestStore()
        try test.setAttributes("*.md merge=nope\n")
        #expect(throws: TruceError.unknownResolver("nope", source: "info/attributes line 1: *.md merge=nope")) {
            try test.store.resolverChoice(for: "a.md", registry: Self.registry)
        }
        #expect(throws: TruceError.unknownResolver("ghost", source: "--resolver ghost")) {
            try test.store.resolverChoice(for: "a.md", registry: Self.registry, explicit: "ghost")
        }
        try test.setAttributes("*.md merge=union\n")
        try test.setConfig("resolver.union.fallback", "three-way")
        try test.setConfig("resolver.three-way.fallback", "union")
        #expect(throws: TruceError.invalidConfiguration("resolver fallbacks form a loop: union -> three-way -> union")) {
            try test.store.resolverChoice(for: "a.md", registry: Self.registry)
        }
        try test.setAttributes("!*.md merge=union\n")
        #expect(
            throws: TruceError.invalidConfiguration(
                "info/attributes line 1: negative patterns are not allowed in gitattributes ('!*.md merge=union')")
        ) {
            try test.store.resolverChoice(for: "a.md", registry: Self.registry)
        }
        try test.setAttributes("*.md merge=\n")
        #expect(throws: TruceError.invalidConfiguration("info/attributes line 1: 'merge=' needs a resolver name")) {
            try test.store.resolverChoice(for: "a.md", registry: Self.registry)
        }
    }

    @Test func aMalformedConfigFileIsAConfigErrorOnOpen() throws {
        let test = try TestStore()
        let config = test.path + "/config"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: config))
        handle.seekToEndOfFile()
        handle.write(Data("[resolver \"three-way\"\n\tstyle = \n[broken\n".utf8))
        try handle.close()
        #expect {
            try DocumentStore.open(at: test.path)
        } throws: { error in
            guard case .invalidConfiguration(let message) = error as? TruceError else { return false }
            return message.contains("config")
        }
    }
}
