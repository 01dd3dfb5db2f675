import Foundation
import Truce

// The names the documentation's snippets use without declaring them, each with the type the article that introduces
// it gives it: Tests/Snippets/check compiles every snippet against this module, and a snippet's own declaration of a
// name shadows the one here. Nothing here runs: the snippets are compiled, not run.

/// The store an article opens in one snippet and uses in the next.
public var store: DocumentStore { fatalError("snippets are compiled, not run") }

/// The document an article's snippets work on: `let key: DocumentKey = "notes/todo.md"` in Getting started.
public var key: DocumentKey { "notes/todo.md" }

/// A store's directory, as `URL(fileURLWithPath: "/tmp/notes-store")`.
public var url: URL { URL(fileURLWithPath: "/tmp/notes-store") }

/// A hub or another store to sync with: a path or a git URL.
public var hub: String { "/srv/git/notes.git" }

/// Some bytes to save.
public var data: Data { Data("a\n".utf8) }

/// Saves for `saveBatch`.
public var saves: [BatchSave] { [BatchSave(key: "a.txt", content: Data("a\n".utf8))] }

/// The resolver Writing a resolver begins with: the longest head wins.
public struct KeepLongest: Resolver {
    public let name = "keep-longest"
    public init() {}
    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        fatalError("snippets are compiled, not run")
    }
}

/// The to-do list resolver Writing a resolver tests.
public struct TodoListMerge: Resolver {
    public let name = "todo-list"
    public init() {}
    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        fatalError("snippets are compiled, not run")
    }
}
