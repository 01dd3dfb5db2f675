import Foundation
import Truce

struct ResolveCommand: Command {
    static let name = "resolve"
    static let synopsis =
        "truce resolve DOC|--all [--resolver NAME] [--dry-run] [--take HUNK=CHOICE ...] [--content FILE|-] [-i] [--tool NAME] [--device NAME]"
    static let summary = "settle DOC's conflict (or every one, with --all) with the resolver config picks, or with a person's answers"
    static let options: [Option] = [
        .value("--resolver", help: "use this resolver (and its fallbacks) instead of the one config picks"),
        .flag("--dry-run", help: "say what would happen and write nothing"),
        .value(
            "--take", help: "answer a conflict point: HUNK=ours|theirs|base|both|VERSION|file:PATH, HUNK an id or a JSON Pointer path (repeatable)"),
        .path("--content", help: "the whole resolved document, from FILE or - for standard input"),
        .flag("--delete", help: "settle the conflict as a deletion"),
        .flag("--all", help: "settle every document in conflict, written together as one pack"),
        .flag("--interactive", "-i", help: "resolve as a person in the full-screen terminal resolver (line mode without a terminal)"),
        .value("--tool", help: "resolve in a git mergetool: mergetool.NAME.cmd from the store's config, or vimdiff, meld, kdiff3, vscode"),
        .device, .json,
    ]

    static let details: String? = """
        resolve -i DOC (or -i --all, document after document) shows each conflict point with the base and every head,
        side by side on a wide terminal. Keys:
        \(Screen.helpLines.map { "  " + $0 }.joined(separator: "\n"))
        When standard input or output is not a terminal, -i asks point by point: one answer per line (as --take spells
        it, or skip, undo, park, quit). The editor is $VISUAL, else $EDITOR, else vi. NO_COLOR or TERM=dumb: no colour.

        resolve DOC --tool NAME runs a git mergetool with $LOCAL, $BASE, $REMOTE and $MERGED, one pair of heads at a time,
        current first: mergetool.NAME.cmd and mergetool.NAME.trustExitCode from the store's config, or git's command line
        for vimdiff, nvimdiff, gvimdiff, meld, kdiff3 and vscode (mergetool.NAME.path names the program).

        Exit codes: 0 written (or nothing to resolve); 1 a person is still needed: conflicts remain, -i quit or parked,
        the tool failed, left MERGED unchanged or left conflict markers (nothing written); 2 bad usage or input: an
        unknown tool, -i or --tool on a document not in conflict, a terminal smaller than 40x12; 3 the store failed.
        """

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        if invocation.arguments.has("--interactive") { return try await ResolveInteractively.run(invocation) }
        if let tool = invocation.arguments.value("--tool") { return try await ResolveWithTool.run(invocation, tool: tool) }
        if invocation.arguments.has("--all") { return try await resolveAll(invocation) }
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let arguments = invocation.arguments
        let personal = [!arguments.all("--take").isEmpty, arguments.value("--content") != nil, arguments.has("--delete")].filter { $0 }.count
        if personal > 1 { throw UsageError("give only one of --take, --content and --delete") }
        if personal == 1, arguments.value("--resolver") != nil || arguments.has("--dry-run") {
            throw UsageError("--resolver and --dry-run choose an automatic resolution; a person's answer needs neither")
        }
        let answers = try arguments.all("--take").map(parseTake)
        let content = try arguments.path("--content").map(SaveCommand.readInput)
        let store = try invocation.openStore()
        let device = invocation.device()

        if !answers.isEmpty {
            let duplicates = Dictionary(grouping: answers, by: \.0).filter { $0.value.count > 1 }.keys.sorted()
            if let hunk = duplicates.first { throw UsageError("conflict point \(hunk) is answered twice") }
            let result = try await store.resolve(
                key, answering: Dictionary(uniqueKeysWithValues: answers), device: device)
            return try report(result, key, store, invocation)
        }
        if content != nil || arguments.has("--delete") {
            return try report(await store.resolve(key, to: content, device: device), key, store, invocation)
        }
        let result = try await store.resolve(
            key, resolverName: arguments.value("--resolver"), device: device,
            dryRun: arguments.has("--dry-run"))
        return try report(result, key, store, invocation)
    }

    /// `resolve --all`: every document in conflict, automatic resolutions only.
    static func resolveAll(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let arguments = invocation.arguments
        if !arguments.all("--take").isEmpty || arguments.value("--content") != nil || arguments.has("--delete") {
            throw UsageError("--all settles documents automatically; answer a person's part one document at a time")
        }
        let store = try invocation.openStore()
        let resolverName = arguments.value("--resolver")
        var results: [DocumentKey: ResolveResult] = [:]
        if arguments.has("--dry-run") {
            for versions in try store.documentsInConflict() {
                results[versions.key] = try await store.resolve(
                    versions.key, resolverName: resolverName,
                    device: invocation.device(), dryRun: true)
            }
        } else {
            let progress = CountProgress(output: invocation.output, doing: "resolving documents in conflict")
            results = try await store.resolveAll(resolverName: resolverName, device: invocation.device(), progress: progress?.callback)
            progress?.finish()
        }
        var needsPerson = false
        // A list, not an object keyed by document: JSON tools compare member names by canonical equivalence,
        // which would fold NFC and NFD spellings of a key, two documents, into one.
        var reports: [ResolveReport] = []
        for (key, result) in results.sorted(by: { $0.key < $1.key }) {
            switch result {
            case .resolved(let version, let resolver, let state):
                reports.append(ResolveReport(document: key, outcome: "resolved", resolver: resolver, version: version, state: state))
                if !invocation.wantsJSON { invocation.output.out("resolved \(key) with \(resolver): \(version.id.hex)") }
            case .wouldResolve(let content, let resolver):
                reports.append(ResolveReport(document: key, outcome: "wouldResolve", resolver: resolver))
                if !invocation.wantsJSON {
                    invocation.output.out("dry run: \(resolver) would resolve \(key) into \(content.map { "\($0.count) bytes" } ?? "a deletion")")
                }
            case .nothingToResolve:
                // resolveAll reports only documents it settled or that need a person.
                break
            case .needsPerson(let points, let resolver, let reasons):
                needsPerson = true
                reports.append(ResolveReport(document: key, outcome: "needsPerson", resolver: resolver, reasons: reasons, points: points))
                if !invocation.wantsJSON {
                    invocation.output.out(
                        "\(key): needs a person (\(points.count) conflict points); see '\(invocation.output.toolName) conflicts \(key)'")
                }
            }
        }
        if invocation.wantsJSON { try invocation.output.json(reports) } else if results.isEmpty { invocation.output.out("no documents in conflict") }
        return needsPerson ? .needsPerson : .success
    }

    static func report(_ result: ResolveResult, _ key: DocumentKey, _ store: DocumentStore, _ invocation: Invocation) throws -> ExitCode {
        let output = invocation.output
        switch result {
        case .resolved(let version, let resolver, let state):
            if invocation.wantsJSON {
                try output.json(ResolveReport(outcome: "resolved", resolver: resolver, version: version, state: state))
            } else {
                output.out("resolved \(key) with \(resolver): \(version.id.hex)")
                if state == .inConflict {
                    output.error("note: a version saved meanwhile keeps \(key) in conflict; see '\(output.toolName) versions \(key)'")
                }
            }
            return .success
        case .wouldResolve(let content, let resolver):
            if invocation.wantsJSON {
                // Bytes that are not UTF-8 (an image, say) go as base64, as in `conflicts --json`: decoding them would change them.
                let text = content.flatMap { String(data: $0, encoding: .utf8) }
                try output.json(
                    ResolveReport(
                        outcome: "wouldResolve", resolver: resolver, content: text,
                        contentBase64: text == nil ? content?.base64EncodedString() : nil))
            } else {
                let what = content.map { "\($0.count) bytes" } ?? "a deletion"
                output.out("dry run: \(resolver) would resolve \(key) into \(what); nothing was written")
            }
            return .success
        case .nothingToResolve(let version):
            if invocation.wantsJSON {
                try output.json(ResolveReport(outcome: "nothingToResolve", version: version, state: version.isDeletion ? .deleted : .settled))
            } else {
                output.out("nothing to resolve: \(key) is \(version.isDeletion ? "deleted" : "settled") at \(version.id.hex)")
            }
            return .success
        case .needsPerson(let points, let resolver, let reasons):
            if invocation.wantsJSON {
                try output.json(ResolveReport(outcome: "needsPerson", resolver: resolver, reasons: reasons, points: points))
            } else {
                var lines = reasons.map { "passed: \($0)" }
                lines += ConflictsCommand.describe(points, of: try store.contestedConflictSet(of: key))
                let place = points.contains { $0.path != nil } ? "PATH" : "HUNK"
                lines += [
                    "",
                    "answer with: \(output.toolName) resolve \(key) --take \(place)=ours|theirs|base|both|both-reversed|VERSION|file:FILE ... or --content FILE",
                ]
                output.out(lines.joined(separator: "\n"))
            }
            return .needsPerson
        }
    }

    /// Reads `H1=ours`, `H2=<version id>`, `H3=file:PATH`, `/editor/theme=theirs`.
    ///
    /// A JSON Pointer may itself hold `=`, so the split is at the first `=` whose remainder is a choice.
    static func parseTake(_ text: String) throws -> (String, HunkAnswer) {
        // Split by bytes, at the first '=' that leaves a valid choice: a JSON Pointer path may hold '=' itself.
        let bytes = Array(text.utf8)
        let splits = bytes.indices.filter { bytes[$0] == UInt8(ascii: "=") }
        guard let first = splits.first else { throw UsageError("--take needs HUNK=CHOICE, got '\(text)'") }
        let equals =
            splits.first { index in
                let rest = String(decoding: bytes[(index + 1)...], as: UTF8.self)
                return rest.hasPrefix("file:") || HunkAnswer(choice: rest) != nil
            } ?? first
        let hunk = String(decoding: bytes[..<equals], as: UTF8.self)
        let choice = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
        if choice.hasPrefix("file:") {
            return (hunk, .text(try SaveCommand.readInput(Array(choice.dropFirst(5).utf8))))
        }
        guard let answer = HunkAnswer(choice: choice) else {
            throw UsageError("unknown choice '\(choice)' for \(hunk); use ours, theirs, base, both, a version id or file:PATH")
        }
        return (hunk, answer)
    }
}

struct ResolveReport: Encodable {
    /// Set in `resolve --all`'s list, which reports many documents.
    var document: DocumentKey? = nil
    let outcome: String
    /// The resolver that settled it or asked for a person; absent when there was nothing to resolve.
    var resolver: String? = nil
    var version: Version? = nil
    var state: DocumentState? = nil
    /// The content a dry run would write, when it is UTF-8 text.
    var content: String? = nil
    /// The content a dry run would write, base64-encoded, when it is not UTF-8 text.
    var contentBase64: String? = nil
    var reasons: [String]? = nil
    var points: [ConflictPoint]? = nil
}
