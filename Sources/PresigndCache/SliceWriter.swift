#if canImport(Glibc)
    import Glibc
#endif

/// One slice being written: a `tmp-*` file in its object's directory, renamed to its slice name by
/// `SliceStore.commit` once whole and synced. Until then nothing serves it, and a crash leaves only the temporary
/// file, which the integrity check removes. Dropped without a commit, it removes its file. Not `Sendable`: one
/// fill owns it.
public final class SliceWriter {
    let slice: SliceID
    let version: ObjectVersion
    let temporaryPath: String
    public let expectedLength: Int
    public private(set) var written = 0
    /// Open while bytes may be appended; nil once finished or abandoned.
    private var descriptor: Int32?

    init(slice: SliceID, version: ObjectVersion, descriptor: Int32, temporaryPath: String, expectedLength: Int) {
        self.slice = slice
        self.version = version
        self.descriptor = descriptor
        self.temporaryPath = temporaryPath
        self.expectedLength = expectedLength
    }

    public var index: Int { slice.index }

    /// Appends bytes as they arrive from upstream; more than the slice holds, or after the end, is an error.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(CacheError) {
        guard let descriptor, written + bytes.count <= expectedLength else {
            throw .sliceOutOfRange(index: slice.index)
        }
        try FileSystem.writeAll(descriptor, bytes, path: temporaryPath)
        written += bytes.count
    }

    public func append(_ bytes: [UInt8]) throws(CacheError) {
        try FileSystem.withBytes(bytes) { (raw) throws(CacheError) in try append(raw) }
    }

    /// An independent read descriptor on the partial file: waiters stream the first `written` bytes before the
    /// commit (the descriptor stays valid after the rename).
    public func openPartial() throws(CacheError) -> OpenSlice {
        OpenSlice(descriptor: try FileSystem.open(temporaryPath, O_RDONLY), offset: 0, length: written)
    }

    /// Drops the partial file (the fill failed or was abandoned).
    public func abandon() {
        guard let descriptor else { return }
        self.descriptor = nil
        FileSystem.close(descriptor)
        try? FileSystem.unlink(temporaryPath)  // best effort: the integrity check removes what is left
    }

    /// Checks the length, syncs and closes: the file is ready for its final name.
    func finish() throws(CacheError) {
        guard let descriptor else { throw .sliceOutOfRange(index: slice.index) }
        guard written == expectedLength else {
            abandon()
            throw .sliceOutOfRange(index: slice.index)
        }
        self.descriptor = nil
        defer { FileSystem.close(descriptor) }
        do {
            // Data before name (issue 23 §2): the bytes are durable before the final name can point at them.
            try FileSystem.fdatasync(descriptor, path: temporaryPath)
        } catch {
            try? FileSystem.unlink(temporaryPath)
            throw error
        }
    }

    deinit { abandon() }
}
