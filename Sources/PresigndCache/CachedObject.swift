/// What a lookup finds: the stored object, its layout and which slices are present now.
public struct CachedObject: Sendable, Equatable {
    public var identity: ObjectIdentity
    public var stored: StoredResponse
    public var layout: SliceLayout
    /// Wall-clock milliseconds of the last validation (the store, or a 304 to `If-None-Match`).
    public var validatedAt: Int
    /// Present slice indexes: the store's own set, shared (a lookup copies no slice list, whatever the object's
    /// size). While a copy is alive (a request between its lookup and its answer), the store's next change to the
    /// set copies it once under its lock: one pass per slice written or evicted meanwhile, not per request.
    public var present: Set<Int>

    public init(
        identity: ObjectIdentity, stored: StoredResponse, layout: SliceLayout, validatedAt: Int, present: Set<Int>
    ) {
        self.identity = identity
        self.stored = stored
        self.layout = layout
        self.validatedAt = validatedAt
        self.present = present
    }

    public init(
        identity: ObjectIdentity, stored: StoredResponse, layout: SliceLayout, validatedAt: Int, presentSlices: [Int]
    ) {
        self.init(
            identity: identity, stored: stored, layout: layout, validatedAt: validatedAt, present: Set(presentSlices))
    }

    /// Present slice indexes, ascending (statistics, tests).
    public var presentSlices: [Int] { present.sorted() }

    /// The slices of `slices` not present: what the connection fetches (`SliceLayout.upstreamRanges`). A step per
    /// slice of the range, whatever the object's size.
    public func missing(_ slices: Range<Int>) -> [Int] {
        slices.filter { !present.contains($0) }
    }
}

/// A slice of the store: its object's key and its index.
public struct SliceID: Sendable, Hashable {
    public var key: CacheKey
    public var index: Int

    public init(key: CacheKey, index: Int) {
        self.key = key
        self.index = index
    }
}

/// The store's contents at a glance (`presignd cache stats`).
public struct StoreStatistics: Sendable, Equatable {
    public var objects = 0
    public var slices = 0
    /// Bytes of present slices (what `max_size` bounds).
    public var bytes = 0
    public var capacity = 0

    public init(objects: Int = 0, slices: Int = 0, bytes: Int = 0, capacity: Int = 0) {
        self.objects = objects
        self.slices = slices
        self.bytes = bytes
        self.capacity = capacity
    }
}

/// What the integrity check on open removed.
public struct IntegrityReport: Sendable, Equatable {
    /// Entries dropped whole: unreadable or foreign meta, a directory name that is not their key.
    public var droppedObjects = 0
    /// Partial writes (`tmp-*`), slices of another version, of the wrong length or outside the object.
    public var droppedFiles = 0
    /// Whole slices kept.
    public var keptSlices = 0

    public init(droppedObjects: Int = 0, droppedFiles: Int = 0, keptSlices: Int = 0) {
        self.droppedObjects = droppedObjects
        self.droppedFiles = droppedFiles
        self.keptSlices = keptSlices
    }
}
