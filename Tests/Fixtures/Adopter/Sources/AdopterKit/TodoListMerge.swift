import Foundation
import Truce

/// The app's own resolver: to-do lists merged task by task, every head's tasks once (current first), and a task
/// checked on any head stays checked.
public struct TodoListMerge: Resolver {
    public let name = "todo-list"

    public init() {}

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let done = Array("- [x] ".utf8)
        let open = Array("- [ ] ".utf8)
        var tasks: [[UInt8]] = []
        var checked: Set<[UInt8]> = []
        for head in conflict.heads {
            guard let content = head.content else { return .pass(reason: "a head deleted the list") }
            for line in content.split(separator: UInt8(ascii: "\n")).map(Array.init) {
                guard line.starts(with: done) || line.starts(with: open) else {
                    return .pass(reason: "a line is not a task")
                }
                let task = Array(line.dropFirst(done.count))
                if !tasks.contains(task) { tasks.append(task) }
                if line.starts(with: done) { checked.insert(task) }
            }
        }
        let lines = tasks.map { (checked.contains($0) ? done : open) + $0 + Array("\n".utf8) }
        return .resolved(content: Data(lines.joined()))
    }
}

extension ResolverRegistry {
    /// The built-in resolvers and the app's own.
    public static var notes: ResolverRegistry {
        var registry = ResolverRegistry.standard
        registry.register(TodoListMerge())
        return registry
    }
}
