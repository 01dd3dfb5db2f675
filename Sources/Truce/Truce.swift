@_exported import Deduplicate
@_exported import ExternalDriver
@_exported import LastWriterWins
@_exported import ListConflicts
@_exported import OverwriteWithCurrent
@_exported import StructuredMerge
@_exported import ThreeWayMerge
@_exported import TruceCore
@_exported import UnionMerge

extension ResolverRegistry {
    /// Every built-in resolver (overwrite-with-current, three-way, list-conflicts, union, last-writer-wins, deduplicate,
    /// structured), and the external merge drivers the store's own config defines.
    public static let standard = ResolverRegistry(
        [OverwriteWithCurrent(), ThreeWayMerge(), ListConflicts(), UnionMerge(), LastWriterWins(), Deduplicate(), StructuredMerge()],
        provider: ExternalDriver.provider
    )
}
