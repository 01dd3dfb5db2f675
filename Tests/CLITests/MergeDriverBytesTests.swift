import Foundation
import TestSupport
import Testing

/// `truce merge-driver` never changes a byte no side changed: identity and one-sided merges leave the changed side's
/// file as it is, for JSON of every shape and for property lists; labels, the base section and marker length as git's
/// merge-file gives them.
@Suite(.timeLimit(.minutes(20))) struct MergeDriverBytesTests {
    /// Runs the driver on copies of the three contents and returns its status, stderr and what CURRENT holds after.
    static func drive(
        base: Data, current: Data, other: Data, path: String = "x.json", options: [String] = [], directory: String? = nil
    ) async throws -> (status: Int32, stderr: String, result: Data) {
        let files = TemporaryDirectory("truce-driver-bytes")
        let paths = [files.write(base, to: "base"), files.write(current, to: "current"), files.write(other, to: "other")]
        let run = try await runAsync(
            truceExecutable, ["merge-driver"] + options + paths + [path], environment: ["GIT_CEILING_DIRECTORIES": "/tmp"],
            directory: directory ?? files.path)
        return (run.status, run.errorOutput, FileManager.default.contents(atPath: paths[1]) ?? Data())
    }

    @Test func identityAndOneSidedMergesOfTheJSONCorpusKeepEveryByte() async throws {
        let documents = JSONCorpus.shapes.map { Data($0.utf8) } + JSONCorpus.generate(count: 400, seed: 28).map(\.bytes)
        let changed = try await concurrently(0..<documents.count, width: 2) { index -> String? in
            let document = documents[index]
            let identity = try await Self.drive(base: document, current: document, other: document)
            guard identity.status == 0, identity.stderr.isEmpty, identity.result == document else {
                return "document \(index): exit \(identity.status) \(identity.stderr) \(identity.result.escaped)"
            }
            return nil
        }
        #expect(changed.compactMap { $0 } == [])
        // One side reformatted, or changed a value: the merge is that side's file, whichever side it is.
        for (index, document) in JSONCorpus.generate(count: 40, seed: 2803).enumerated() where !document.scalars.isEmpty {
            let edited = document.replacing(0, with: "\"edited\"")
            for (current, other) in [(document.bytes, edited), (edited, document.bytes)] {
                let merged = try await Self.drive(base: document.bytes, current: current, other: other)
                #expect(merged.status == 0 && merged.result == edited, "document \(index): \(merged.result.escaped)")
            }
        }
    }

    /// XML (as Foundation writes it and as a person might) and binary property lists, merged with themselves and one-sided.
    @Test func identityAndOneSidedMergesOfPropertyListsKeepEveryByte() async throws {
        var random = SeededRandom(seed: 2804)
        var lists: [Data] = []
        for index in 0..<30 {
            var entries: [String: Any] = ["name": "list \(index)", "count": random.int(0...1000), "ratio": random.unit(), "on": random.chance(50)]
            entries["when"] = Date(timeIntervalSinceReferenceDate: Double(random.int(0...1_000_000_000)))
            entries["blob"] = Data((0..<random.int(0...40)).map { _ in UInt8(random.int(0...255)) })
            entries["nested"] = ["items": (0..<random.int(0...5)).map { "item \($0)" }, "deep": ["x": random.int(0...9)]]
            for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
                lists.append(try PropertyListSerialization.data(fromPropertyList: entries, format: format, options: 0))
            }
        }
        // Written by hand: a comment, odd indentation, no final newline.
        lists.append(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <!-- settings -->
                <dict>
                      <key>b</key>   <integer>2</integer>
                  <key>a</key>
                \t<string>one &amp; two</string>
                </dict>
                </plist>
                """.utf8))
        for (index, list) in lists.enumerated() {
            let identity = try await Self.drive(base: list, current: list, other: list, path: "Settings.plist")
            #expect(identity.status == 0 && identity.result == list, "list \(index): \(identity.stderr)")
            let other = lists[(index + 2) % lists.count]
            let oneSided = try await Self.drive(base: list, current: list, other: other, path: "Settings.plist")
            #expect(oneSided.status == 0 && oneSided.result == other, "list \(index): \(oneSided.stderr)")
        }
    }

    static let base = Data("{\n  \"theme\": \"light\",\n  \"size\": 12\n}\n".utf8)
    static let ours = Data("{\n  \"theme\": \"dark\",\n  \"size\": 12\n}\n".utf8)
    static let theirs = Data("{\n  \"theme\": \"solarized\",\n  \"size\": 14\n}\n".utf8)

    @Test func labelsAndTheBaseSectionAreGitsWhenAskedFor() async throws {
        let plain = try await Self.drive(
            base: Self.base, current: Self.ours, other: Self.theirs, options: ["-L", "HEAD", "-L", "base", "-L", "feature"])
        #expect(plain.status == 1)
        #expect(
            String(decoding: plain.result, as: UTF8.self)
                == "{\n<<<<<<< HEAD\n  \"theme\": \"dark\",\n=======\n  \"theme\": \"solarized\",\n>>>>>>> feature\n  \"size\": 14\n}\n")
        let diff3 = try await Self.drive(
            base: Self.base, current: Self.ours, other: Self.theirs,
            options: ["--conflict-style", "diff3", "-L", "HEAD", "-L", "merged common ancestors"])
        #expect(
            String(decoding: diff3.result, as: UTF8.self)
                == "{\n<<<<<<< HEAD\n  \"theme\": \"dark\",\n||||||| merged common ancestors\n  \"theme\": \"light\",\n=======\n"
                + "  \"theme\": \"solarized\",\n>>>>>>> theirs\n  \"size\": 14\n}\n")
        // A member only one side has: the base section is there, empty.
        let added = try await Self.drive(
            base: Data("{}".utf8), current: Data("{\"a\": 1}".utf8), other: Data("{\"a\": 2}".utf8), options: ["--conflict-style", "zdiff3"])
        #expect(String(decoding: added.result, as: UTF8.self) == "{\n<<<<<<< ours\n  \"a\": 1\n||||||| base\n=======\n  \"a\": 2\n>>>>>>> theirs\n}")
    }

    /// The repository's merge.conflictStyle, read as git reads it, when no option says otherwise.
    @Test func mergeConflictStyleOfTheRepositoryAsksForTheBaseSection() async throws {
        let repository = TemporaryDirectory("truce-driver-style")
        #expect(try git(["init", "-q", repository.path]).status == 0)
        for (style, option, showsBase) in [
            ("diff3", [String](), true), ("zdiff3", [], true), ("merge", [], false), ("diff3", ["--conflict-style", "merge"], false),
        ] {
            #expect(try git(["-C", repository.path, "config", "merge.conflictStyle", style]).status == 0)
            for path in ["x.json", "x.txt"] {
                let merged = try await Self.drive(
                    base: Self.base, current: Self.ours, other: Self.theirs, path: path, options: option, directory: repository.path)
                #expect(merged.status == 1)
                #expect(String(decoding: merged.result, as: UTF8.self).contains("||||||| base") == showsBase, "\(style) \(option) \(path)")
            }
        }
        #expect(try git(["-C", repository.path, "config", "merge.conflictStyle", "fancy"]).status == 0)
        let refused = try await Self.drive(base: Self.base, current: Self.ours, other: Self.theirs, directory: repository.path)
        #expect(refused.status == 2 && refused.stderr.contains("unknown style 'fancy'"), "\(refused.stderr)")
        #expect(refused.result == Self.ours)
    }

    /// Markers longer than any line of the files that starts like one, so that the result reads back as git's merge-file
    /// would write it with that marker size; exactly the size asked for otherwise.
    @Test func markersAreLongerThanAnyMarkerLikeLineInTheFiles() async throws {
        let base = Data("intro\n<<<<<<< kept from an old merge\nline\n========\nend\n".utf8)
        let ours = Data("intro\n<<<<<<< kept from an old merge\nline ours\n========\nend\n".utf8)
        let theirs = Data("intro\n<<<<<<< kept from an old merge\nline theirs\n========\nend\n".utf8)
        let merged = try await Self.drive(base: base, current: ours, other: theirs, path: "notes.txt", options: ["--marker-size", "7"])
        #expect(merged.status == 1)
        let oracle = try gitMergeFile(
            current: ours, base: base, other: theirs, options: ["--marker-size", "9", "-L", "ours", "-L", "base", "-L", "theirs"])
        #expect(merged.result == oracle.stdout, "\(merged.result.escaped)")
        // Without such lines, git's %L as given.
        let plain = try await Self.drive(
            base: Data("a\nb\n".utf8), current: Data("a\nB\n".utf8), other: Data("a\nc\n".utf8), path: "n.txt", options: ["--marker-size", "10"])
        #expect(String(decoding: plain.result, as: UTF8.self).hasPrefix("a\n<<<<<<<<<< ours\n"))
    }
}
