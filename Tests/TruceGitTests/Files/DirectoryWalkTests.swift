import Foundation
import TestSupport
import Testing

@testable import TruceGit

/// The readdir walk behind the listings of refs/ and logs/: every regular file below a folder, at any depth, and
/// nothing else; `find -type f` is the oracle.
@Suite(.timeLimit(.minutes(10))) struct DirectoryWalkTests {
    @Test func listsEveryRegularFileBelowAFolderAsFindDoes() throws {
        let directory = TemporaryDirectory("truce-walk")
        let root = directory.file("refs") + "/"
        let manager = FileManager.default
        for folder in ["heads/ab/cdef", "heads/ab/0123", "conflicts/ab", "empty/deeper"] {
            try manager.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        for file in ["heads/ab/cdef/1111", "heads/ab/cdef/2222.lock", "heads/ab/0123/3333", "conflicts/ab/cdef", "top"] {
            try Data("x\n".utf8).write(to: URL(fileURLWithPath: root + file))
        }
        // A link is not a reference file, whatever it points at.
        try manager.createSymbolicLink(atPath: root + "heads/ab/link", withDestinationPath: root + "top")
        try manager.createSymbolicLink(atPath: root + "loop", withDestinationPath: root + "heads")

        let walked = DirectoryWalk.files(under: root).sorted()
        let found = try run("/usr/bin/find", [".", "-type", "f"], directory: root)
        let expected = found.output.split(separator: "\n").map { String($0.dropFirst(2)) }.sorted()
        #expect(walked == expected)
        #expect(walked == ["conflicts/ab/cdef", "heads/ab/0123/3333", "heads/ab/cdef/1111", "heads/ab/cdef/2222.lock", "top"])
    }

    @Test func aMissingFolderHasNoFiles() {
        #expect(DirectoryWalk.files(under: TemporaryDirectory("truce-walk").file("absent") + "/").isEmpty)
    }
}
