@_exported import ListConflicts
@_exported import OverwriteWithCurrent
@_exported import ThreeWayMerge
@_exported import TruceCore
@_exported import UnionMerge

extension ResolverRegistry {
    /// Every built-in resolver: overwrite-with-current, three-way, list-conflicts, union.
    public static let standard = ResolverRegistry([OverwriteWithCurrent(), ThreeWayMerge(), ListConflicts(), UnionMerge()])
}
