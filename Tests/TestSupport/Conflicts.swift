import Foundation
import Truce
import TruceTesting

/// A conflict made for a test: the base version and one head per device, oldest first.
public struct MadeConflict: Sendable {
    public let base: Version
    public let heads: [Version]
    /// The head the current-version rule picks: the last one saved (latest date).
    public var current: Version { heads.last! }
}

extension TestStore {
    /// Saves `base`, then one version per `(device, content)` from it with increasing dates: a conflict with `heads.count` heads.
    ///
    /// TruceTesting's `ConflictFixture` written into this store: the base by "origin" at 1_796_000_000, the heads a
    /// minute apart after it, the last one current.
    @discardableResult
    public func makeConflict(_ key: DocumentKey, base: Data, heads: [(String, Data?)]) throws -> MadeConflict {
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        let versions = heads.enumerated().map { index, head in
            FixtureVersion(data: head.1, device: head.0, date: start.addingTimeInterval(Double(index + 1) * 60))
        }
        let fixture = ConflictFixture(
            key: key, base: FixtureVersion(data: base, device: "origin", date: start), current: versions.last!, conflicts: Array(versions.dropLast()))
        let written = try fixture.write(into: store)
        return MadeConflict(base: written.base!, heads: written.conflicts + [written.current])
    }

    /// Writes `text` to the store's `info/attributes`.
    public func setAttributes(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/info/attributes"))
    }

    /// Removes the fsync lines a store's config gets at creation (`core.fsync`, `core.fsyncMethod`), whatever it holds.
    public func unsetFsyncConfig() throws {
        for name in ["core.fsync", "core.fsyncMethod"] {
            // git config exits 5 when there was nothing to remove.
            let result = try TestSupport.git(["-C", path, "config", "--unset-all", name])
            guard [0, 5].contains(result.status) else {
                throw GitCommandFailed(arguments: ["config", "--unset-all", name], stderr: result.errorOutput)
            }
        }
    }

    /// Sets `name = value` in the store's config with the real git.
    public func setConfig(_ name: String, _ value: String) throws {
        _ = try git("config", name, value)
    }
}
