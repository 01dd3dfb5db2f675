import Foundation
import TestSupport
import Testing
import TruceCore

/// A resolver whose resolution is the value of its option `key`: it proves which options reached it.
private struct OptionEcho: Resolver {
    let name: String
    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        .resolved(content: Data((context.options["key"] ?? "no key").utf8))
    }
}

/// `store.route(_:to:options:)`: routing written from code into the synced `.truce/attributes` and `.truce/config`.
@Suite(.timeLimit(.minutes(10))) struct RouteTests {
    static let registry = ResolverRegistry([OptionEcho(name: "todo-list"), OptionEcho(name: "other"), OptionEcho(name: "three-way")])
    static let date = Date(timeIntervalSince1970: 1_796_000_000)

    /// The bytes of the current version of a routing document, read with plain `git show`.
    static func gitShow(_ store: TestStore, _ key: String) throws -> String {
        let id = try #require(try store.store.currentVersion(of: DocumentKey(key))).id.hex
        return try store.git("show", "\(id):\(key)")
    }

    @Test func theSelectionPicksTheRoutedResolverWithItsOptionsAndResolveRunsIt() async throws {
        let store = try TestStore()
        try store.makeConflict("lists/shop.todo", base: .text("a\n"), heads: [("laptop", .text("b\n")), ("phone", .text("c\n"))])
        let written = try store.store.route(
            "*.todo", to: "todo-list", options: ["key": "value", "markerSize": "9"], device: "laptop", date: Self.date)
        #expect(written.map(\.key) == [".truce/attributes", ".truce/config"])
        #expect(written.allSatisfy { $0.deviceName == "laptop" && $0.modificationDate == Self.date })

        let choice = try store.store.resolverChoice(for: "lists/shop.todo", registry: Self.registry)
        #expect(choice.chain == ["todo-list"])
        #expect(choice.source == ".truce/attributes line 1: *.todo merge=todo-list")
        #expect(choice.options["todo-list"]?.values == ["key": "value", "markersize": "9"])
        // Keys the pattern does not match keep the default.
        #expect(try store.store.resolverChoice(for: "lists/shop.md", registry: Self.registry).chain == ["three-way"])

        guard
            case .resolved(let version, let resolver, let state) = try await store.store.resolve(
                "lists/shop.todo", registry: Self.registry, device: "laptop")
        else {
            Issue.record("the routed resolver did not settle the conflict")
            return
        }
        #expect(resolver == "todo-list" && state == .settled)
        #expect(try store.store.contents(of: version) == .text("value"), "the resolver got the routed option")
    }

    @Test func plainGitReadsTheBytesRouteWrote() async throws {
        let store = try TestStore()
        try store.store.route("*.todo", to: "todo-list", options: ["key": "a value; with # and \"quotes\"", "fallback": "other"], device: "laptop")
        #expect(try Self.gitShow(store, ".truce/attributes") == "*.todo merge=todo-list\n")

        let config = try Self.gitShow(store, ".truce/config")
        let file = store.directory.write(.text(config), to: "routing.config")
        #expect(try TestSupport.git("config", "--file", file, "--get", "resolver.todo-list.key").output == "a value; with # and \"quotes\"\n")
        #expect(try TestSupport.git("config", "--file", file, "--get", "resolver.todo-list.fallback").output == "other\n")

        // git's own attribute matching agrees: the document as a work tree's .gitattributes.
        let work = store.directory.file("work")
        #expect(try TestSupport.git("init", "-q", work).status == 0)
        store.directory.write(.text(try Self.gitShow(store, ".truce/attributes")), to: "work/.gitattributes")
        #expect(try TestSupport.git("-C", work, "check-attr", "merge", "--", "lists/shop.todo").output == "lists/shop.todo: merge: todo-list\n")
        #expect(try TestSupport.git("-C", work, "check-attr", "merge", "--", "shop.md").output == "shop.md: merge: unspecified\n")
    }

    @Test func routingAPatternAgainReplacesItsRuleAndKeepsEveryOtherByte() async throws {
        let store = try TestStore()
        try store.store.save(
            .text("# synced\n*.md  merge=three-way\n*.todo merge=other diff=todo\n*.txt merge=union\r\n"),
            to: ".truce/attributes", device: "laptop")
        try store.store.route("*.todo", to: "todo-list", options: ["key": "1"], device: "laptop")
        #expect(
            try Self.gitShow(store, ".truce/attributes")
                == "# synced\n*.md  merge=three-way\n*.todo diff=todo\n*.todo merge=todo-list\n*.txt merge=union\r\n")

        try store.store.route("*.todo", to: "other", options: ["KEY": "2"], device: "laptop")
        #expect(
            try Self.gitShow(store, ".truce/attributes")
                == "# synced\n*.md  merge=three-way\n*.todo diff=todo\n*.todo merge=other\n*.txt merge=union\r\n")
        let file = store.directory.write(.text(try Self.gitShow(store, ".truce/config")), to: "routing.config")
        #expect(try TestSupport.git("config", "--file", file, "--get-all", "resolver.other.key").output == "2\n")
        #expect(
            try TestSupport.git("config", "--file", file, "--get-all", "resolver.todo-list.key").output == "1\n", "another resolver's options stay")

        // The same rule again writes nothing.
        let history = try store.store.history(of: ".truce/attributes").count + store.store.history(of: ".truce/config").count
        #expect(try store.store.route("*.todo", to: "other", options: ["key": "2"], device: "laptop").isEmpty)
        #expect(try store.store.history(of: ".truce/attributes").count + store.store.history(of: ".truce/config").count == history)
        #expect(try store.store.resolverChoice(for: "a.todo", registry: Self.registry).options["other"]?["key"] == "2")
    }

    @Test func aNewPatternIsAppendedAndDecidesOverEarlierLines() async throws {
        let store = try TestStore()
        try store.store.route("*.todo", to: "other", device: "laptop")
        try store.store.route("work/*.todo", to: "todo-list", device: "laptop")
        #expect(try Self.gitShow(store, ".truce/attributes") == "*.todo merge=other\nwork/*.todo merge=todo-list\n")
        #expect(try store.store.resolverChoice(for: "work/a.todo", registry: Self.registry).chain == ["todo-list"])
        #expect(try store.store.resolverChoice(for: "home/a.todo", registry: Self.registry).chain == ["other"])
        #expect(try store.store.state(of: ".truce/config") == .absent, "no options, no config document")
    }

    static let refused: [(pattern: String, resolver: String, options: [String: String], reason: String)] = [
        ("", "todo-list", [:], "the pattern is empty"),
        ("*.to do", "todo-list", [:], "no space or tab"),
        ("*.todo\n*.md", "todo-list", [:], "control character"),
        ("*.todo\u{1B}", "todo-list", [:], "control character"),
        ("!*.todo", "todo-list", [:], "negative patterns"),
        ("#*.todo", "todo-list", [:], "comment"),
        ("\"*.todo\"", "todo-list", [:], "quoted"),
        ("[attr]todo", "todo-list", [:], "macro"),
        ("lists/", "todo-list", [:], "only directories"),
        ("*.todo", "", [:], "resolver name ''"),
        ("*.todo", "todo list", [:], "resolver name"),
        ("*.todo", "todo.list", [:], "resolver name"),
        ("*.todo", "-todo", [:], "resolver name"),
        ("*.todo", "to\u{301}do", [:], "resolver name"),
        ("*.todo", "todo-list", ["": "v"], "option name ''"),
        ("*.todo", "todo-list", ["1key": "v"], "option name '1key'"),
        ("*.todo", "todo-list", ["a_b": "v"], "option name 'a_b'"),
        ("*.todo", "todo-list", ["a.b": "v"], "option name 'a.b'"),
        ("*.todo", "todo-list", ["key": "a\nb"], "control character"),
        ("*.todo", "todo-list", ["Key": "1", "key": "2"], "one name to git"),
    ]

    @Test(arguments: refused.indices)
    func anInvalidRouteIsATypedErrorAndChangesNothing(_ index: Int) async throws {
        let row = Self.refused[index]
        let store = try TestStore()
        try store.store.route("*.md", to: "other", options: ["key": "kept"], device: "laptop")
        let before = snapshot(ofStore: store.path)
        do {
            try store.store.route(row.pattern, to: row.resolver, options: row.options, device: "laptop")
            Issue.record("route(\(row.pattern.debugDescription), to: \(row.resolver.debugDescription)) was accepted")
        } catch {
            guard case .invalidRoute(let pattern, let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(pattern.utf8.elementsEqual(row.pattern.utf8))
            #expect(reason.contains(row.reason), "\(reason)")
            #expect(error.isBadInput)
            #expect(error.localizedDescription.hasPrefix("cannot route "), "\(error.localizedDescription)")
        }
        #expect(snapshot(ofStore: store.path) == before)
    }

    @Test func aRoutingDocumentInConflictOrUnreadableIsRefusedAndChangesNothing() async throws {
        let store = try TestStore()
        try store.makeConflict(
            ".truce/attributes", base: .text("*.md merge=other\n"),
            heads: [("laptop", .text("*.md merge=three-way\n")), ("phone", .text("*.md merge=union\n"))])
        var before = snapshot(ofStore: store.path)
        #expect {
            try store.store.route("*.todo", to: "todo-list", device: "laptop")
        } throws: { error in
            guard case .invalidRoute(_, let reason) = error as? TruceError else { return false }
            return reason.contains(".truce/attributes is in conflict (2 heads)")
        }
        #expect(snapshot(ofStore: store.path) == before)

        let other = try TestStore()
        try other.store.save(.text("!*.md merge=other\n"), to: ".truce/attributes", device: "laptop")
        try other.store.save(.text("[resolver \"other\"\n"), to: ".truce/config", device: "laptop")
        before = snapshot(ofStore: other.path)
        #expect(
            throws: TruceError.invalidConfiguration(
                ".truce/attributes line 1: negative patterns are not allowed in gitattributes ('!*.md merge=other')")
        ) {
            try other.store.route("*.todo", to: "todo-list", device: "laptop")
        }
        try other.store.save(.text("*.md merge=other\n"), to: ".truce/attributes", device: "laptop")
        before = snapshot(ofStore: other.path)
        #expect {
            try other.store.route("*.todo", to: "todo-list", options: ["key": "v"], device: "laptop")
        } throws: { error in
            guard case .invalidConfiguration(let what) = error as? TruceError else { return false }
            return what.hasPrefix(".truce/config: ")
        }
        #expect(snapshot(ofStore: other.path) == before)
    }

    @Test func aSecondDeviceSyncingThroughABareHubPicksTheRoutingUp() async throws {
        let directory = TemporaryDirectory("truce-route-hub")
        let hub = directory.file("hub.git")
        #expect(try TestSupport.git("init", "-q", "--bare", hub).status == 0)
        let laptop = try TestStore(), phone = try TestStore()
        try laptop.store.route("*.todo", to: "todo-list", options: ["key": "from the laptop"], device: "laptop")
        _ = try await laptop.store.sync(with: hub)
        let report = try await phone.store.sync(with: hub)
        #expect(report.refused.isEmpty)

        let choice = try phone.store.resolverChoice(for: "shop.todo", registry: Self.registry)
        #expect(choice.chain == ["todo-list"])
        #expect(choice.source == ".truce/attributes line 1: *.todo merge=todo-list")
        #expect(choice.options["todo-list"]?["key"] == "from the laptop")

        try phone.makeConflict("shop.todo", base: .text("a\n"), heads: [("phone", .text("b\n")), ("watch", .text("c\n"))])
        guard case .resolved(let version, "todo-list", _) = try await phone.store.resolve("shop.todo", registry: Self.registry, device: "phone")
        else {
            Issue.record("the synced routing did not settle the phone's conflict")
            return
        }
        #expect(try phone.store.contents(of: version) == .text("from the laptop"))
        #expect(try TestSupport.git("-C", phone.path, "fsck", "--strict").status == 0)
    }
}
