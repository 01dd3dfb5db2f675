import Foundation
import TruceCore

/// A third-party resolver, as an app would write one: to-do lists (`- [ ] task`, `- [x] task`) merged task by task.
///
/// Every task of every head is kept once, in the order the heads list them
/// (current first); a task checked in any head is checked. With the option
/// `checked = last`, checked tasks move to the end.
struct TodoListMerge: Resolver {
    enum Placement: String, CaseIterable { case keep, last }
    let name = "todo-list"

    func validate(options: ResolverOptions) throws { _ = try options.choice("checked", default: Placement.keep) }

    func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let done = Array("- [x] ".utf8), open = Array("- [ ] ".utf8)
        var tasks: [[UInt8]] = [], checked: Set<[UInt8]> = []
        for head in conflict.heads {
            guard let content = head.content else { return .pass(reason: "a head deleted the list") }
            for line in content.split(separator: UInt8(ascii: "\n")).map(Array.init) {
                guard line.starts(with: done) || line.starts(with: open) else {
                    throw TruceError.malformedContent(conflict.key, version: head.version.id, reason: "is not a to-do list")
                }
                let task = Array(line.dropFirst(done.count))
                if !tasks.contains(task) { tasks.append(task) }
                if line.starts(with: done) { checked.insert(task) }
            }
        }
        if try context.options.choice("checked", default: Placement.keep) == .last {
            tasks = tasks.filter { !checked.contains($0) } + tasks.filter(checked.contains)
        }
        return .resolved(content: Data(tasks.map { (checked.contains($0) ? done : open) + $0 + [UInt8(ascii: "\n")] }.joined()))
    }
}
