import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A regular file's bytes mapped read-only instead of read into memory: an import stream given as a file, whose pages
/// are let go as the import goes, so that its memory follows the batch, not the file.
///
/// The mapping is private and never written: a page let go is read again
/// from the file (or the page cache) when next touched, and nothing else
/// changes. What an import keeps of a batch is copied out first.
final class MappedStream: @unchecked Sendable {
    // @unchecked: the mapping is only read, and madvise may be called from any thread.
    private let base: UnsafeMutableRawPointer
    private let length: Int
    /// The file's bytes, sharing the mapping: unmapped once the last `Data` made from them goes.
    let bytes: Data

    /// The regular file open as `descriptor`, mapped whole; nil when it is not a regular file (a pipe, a terminal), is
    /// empty, is not read from its start, or cannot be mapped: the caller reads it instead.
    init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size > 0,
            lseek(descriptor, 0, SEEK_CUR) == 0
        else { return nil }
        let length = Int(status.st_size)
        guard let base = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else { return nil }
        (self.base, self.length) = (base, length)
        bytes = Data(bytesNoCopy: base, count: length, deallocator: .custom { pointer, count in munmap(pointer, count) })
    }

    /// Lets every resident page go: they no longer count as this process's memory until read again.
    func letGo() {
        _ = madvise(base, length, MADV_DONTNEED)
    }
}
