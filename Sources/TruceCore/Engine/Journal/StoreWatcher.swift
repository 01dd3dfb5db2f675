import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calls `onChange` whenever the store's change journal may have moved, from any writer, until `stop()`.
///
/// It watches the directories a journal update lands in (the store itself
/// for `packed-refs`, `refs`, `refs/truce`), not the journal file: git
/// replaces a ref by renaming a lock file over it, and may move it into
/// `packed-refs`. Wake-ups are only hints; `onChange` reads the journal to
/// learn what, if anything, is new, so a spurious wake-up costs one ref read.
/// Linux uses inotify and macOS dispatch sources; where neither can be set up
/// the watcher looks every quarter second instead.
final class StoreWatcher: Sendable {
    enum Mechanism: Sendable, Equatable { case inotify, dispatchSource, poll }

    /// How this watcher learns of changes.
    let mechanism: Mechanism
    private let finished = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let platform: Platform

    /// True once the watcher has stopped and let go of its thread or sources and their file descriptors.
    var hasFinished: Bool { finished.load(ordering: .acquiring) }

    /// The interval of the fallback poll.
    static let pollInterval: Int32 = 250  // milliseconds

    /// Starts watching the store at `path`; the first `onChange` comes right away, for whatever landed before the watch began.
    ///
    /// `polling` forces the fallback, for tests of it.
    init(watching path: String, polling: Bool = false, onChange: @escaping @Sendable () -> Void) {
        let directories = [path, path + "/refs", path + "/refs/truce"]
        #if canImport(Darwin)
            if !polling {
                let sources = DispatchSources(directories: directories)
                platform = .sources(sources)
                mechanism = .dispatchSource
                sources.start(onChange: onChange)
                return
            }
        #endif
        let loop = PollLoop(directories: directories, inotify: !polling)
        platform = .loop(loop)
        mechanism = loop.usesInotify ? .inotify : .poll
        BlockingExecutor.shared.execute { [loop, self] in
            loop.run(onChange: onChange)
            self.finished.store(true, ordering: .releasing)
        }
    }

    /// Stops watching: at most a call of `onChange` already under way still runs. Safe to call more than once.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch platform {
        #if canImport(Darwin)
            case .sources(let sources):
                sources.cancel { [self] in finished.store(true, ordering: .releasing) }
        #endif
        case .loop(let loop):
            loop.wake()
        }
    }

    private enum Platform: Sendable {
        #if canImport(Darwin)
            case sources(DispatchSources)
        #endif
        case loop(PollLoop)
    }
}

/// A thread blocked in `poll(2)` on an inotify descriptor (Linux) and on a pipe that `wake()` closes to end it.
private final class PollLoop: Sendable {
    private let directories: [String]
    /// The inotify instance, or -1 when the system refused one (too many instances, say): then the loop polls on a timer.
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32

    var usesInotify: Bool { inotify >= 0 }

    init(directories: [String], inotify wanted: Bool) {
        self.directories = directories
        #if os(Linux)
            inotify = wanted ? inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK)) : -1
        #else
            inotify = -1
        #endif
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        }
        (wakeRead, wakeWrite) = (ends[0], ends[1])
    }

    /// Ends `run`: closing the pipe's write end makes its read end readable (end of file).
    func wake() {
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    func run(onChange: @Sendable () -> Void) {
        defer {
            if inotify >= 0 { close(inotify) }
            if wakeRead >= 0 { close(wakeRead) }
        }
        addWatches()
        onChange()
        var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0), pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
        let count = nfds_t(usesInotify ? 2 : 1)
        let timeout = usesInotify ? -1 : StoreWatcher.pollInterval
        while true {
            let ready = poll(&descriptors, count, timeout)
            if ready < 0, errno == EINTR { continue }
            // A broken poll or the wake pipe closed: stop rather than spin.
            if ready < 0 || wakeRead < 0 || descriptors[0].revents != 0 { return }
            if usesInotify {
                drainInotify()
                // `refs/truce` appears with the store's first change; adding a watch twice is harmless.
                addWatches()
            }
            onChange()
        }
    }

    private func addWatches() {
        #if os(Linux)
            guard usesInotify else { return }
            let mask = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_ONLYDIR)
            for directory in directories { _ = inotify_add_watch(inotify, directory, mask) }
        #endif
    }

    /// Reads every queued inotify event: which file moved does not matter, only that something did.
    private func drainInotify() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ read(inotify, $0.baseAddress, $0.count) }) > 0 {}
    }
}

#if canImport(Darwin)
    /// One dispatch source per watched directory, each reporting writes, renames and links in it.
    ///
    /// `sources` and `isCancelled` are touched only on `queue`, a serial queue: that confinement is what makes it Sendable.
    private final class DispatchSources: @unchecked Sendable {
        private let directories: [String]
        private let queue = DispatchQueue(label: "truce.store-watcher")
        private var sources: [String: any DispatchSourceFileSystemObject] = [:]
        private var isCancelled = false

        init(directories: [String]) { self.directories = directories }

        func start(onChange: @escaping @Sendable () -> Void) {
            queue.async { [self] in
                addMissingSources(onChange: onChange)
                onChange()
            }
        }

        /// Cancels every source (each closes its descriptor), then calls `done` on the queue.
        func cancel(then done: @escaping @Sendable () -> Void) {
            queue.async { [self] in
                isCancelled = true
                for source in sources.values { source.cancel() }
                sources.removeAll()
                done()
            }
        }

        /// Opens a source for every watched directory that has none yet (`refs/truce` appears with the first change).
        private func addMissingSources(onChange: @escaping @Sendable () -> Void) {
            for directory in directories where !isCancelled && sources[directory] == nil {
                let descriptor = open(directory, O_EVTONLY)
                guard descriptor >= 0 else { continue }
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .rename, .link, .delete],
                    queue: queue)
                source.setEventHandler { [self] in
                    guard !isCancelled else { return }
                    addMissingSources(onChange: onChange)
                    onChange()
                }
                source.setCancelHandler { close(descriptor) }
                sources[directory] = source
                source.resume()
            }
        }
    }
#endif
