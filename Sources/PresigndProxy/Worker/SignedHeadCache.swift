import PresigndHTTP1

#if canImport(Glibc)
    import Glibc
#endif

/// A worker's recently signed upstream heads, reused for a byte-identical client head in the same second.
///
/// Parsing, rewriting and signing are a pure function of the client's head bytes, the configuration and the signing
/// time, and X-Amz-Date has a resolution of one second: a client (or many) repeating the same bodyless request
/// within that second gets the very bytes signing would produce again, so they are copied instead of recomputed
/// (issue 8: "per-request signing work that can be cached"), and the head's parse is taken from the entry too
/// (`RequestDecoder.next(_:available:recall:)`). Nothing else changes: the upstream sees exactly what it would have
/// seen, and SigV4 header signatures carry no nonce.
///
/// Keyed on all of the head's bytes (request line and every field, so no header can be ignored by mistake); heads
/// are compared in full, never by hash alone. Only bodyless requests forwarded as they are get an entry. The table
/// is direct-mapped and small (`slotCount` entries of at most `maxKeyBytes` + `maxHeadBytes`), per worker (no
/// locking), and emptied on every configuration change (`removeAll`).
struct SignedHeadCache: ~Copyable {
    static let slotCount = 16
    static let maxKeyBytes = 2048
    static let maxHeadBytes = 4096

    /// What a probe found for a client head.
    enum Probe: Equatable {
        /// Not cacheable (too large).
        case ineligible
        /// Cached: `entry(at:)` holds the signed head for this second.
        case hit(slot: Int)
        /// Not cached: `fill` with this ticket stores the head's signed head (until the next probe).
        case miss(Ticket)
    }

    /// The slot a missed head maps to; `fill` ignores a ticket once another head was probed.
    struct Ticket: Equatable {
        let slot: Int
        let generation: UInt64
    }

    /// One cached head and what the exchange needs besides it (its parse, and the parts of the forward plan it logs).
    struct Entry {
        fileprivate(set) var key: [UInt8] = []
        /// The signing second, or nil while the slot is empty.
        fileprivate(set) var epochSeconds: Int?
        fileprivate(set) var signedHead: [UInt8] = []
        fileprivate(set) var request: ParsedRequest?
        fileprivate(set) var logPath = ""
        fileprivate(set) var bucket = ""
        fileprivate(set) var upstreamIndex = 0
    }

    /// `slotCount` entries, addressed in place: reading a field through an array subscript copies the whole
    /// entry (a retain and a release of every array and string in it) on every hit.
    private let entries: UnsafeMutablePointer<Entry>
    /// The last missed head's bytes, until `fill` moves them into its slot (a missed head evicts nothing yet).
    private var pendingKey: [UInt8] = []
    private var generation: UInt64 = 0

    init() {
        entries = .allocate(capacity: Self.slotCount)
        entries.initialize(repeating: Entry(), count: Self.slotCount)
    }

    deinit {
        entries.deinitialize(count: Self.slotCount)
        entries.deallocate()
    }

    func entry(at slot: Int) -> Entry { entries[slot] }

    /// A hit's fields one by one: copying the whole `Entry` retains and releases every array and string in it.
    func logPath(at slot: Int) -> String { entries[slot].logPath }
    func bucket(at slot: Int) -> String { entries[slot].bucket }
    func upstreamIndex(at slot: Int) -> Int { entries[slot].upstreamIndex }

    /// Appends a hit's signed head to `buffer`.
    func appendSignedHead(at slot: Int, to buffer: inout [UInt8]) {
        entries[slot].signedHead.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
    }

    /// The cached parse of `head` when `probe` found it (`RequestDecoder`'s `recall`).
    func request(at slot: Int) -> ParsedRequest? { entries[slot].request }

    /// Looks `head` (the client's head bytes) up for the signing second `epochSeconds`.
    mutating func probe(_ head: UnsafeRawBufferPointer, epochSeconds: Int) -> Probe {
        guard head.count <= Self.maxKeyBytes, let base = head.baseAddress else { return .ineligible }
        let slot = Self.slot(of: head)
        if entries[slot].epochSeconds == epochSeconds && entries[slot].key.count == head.count
            && entries[slot].key.withUnsafeBytes({ memcmp($0.baseAddress!, base, head.count) == 0 })
        {
            return .hit(slot: slot)
        }
        generation &+= 1
        pendingKey.removeAll(keepingCapacity: true)
        pendingKey.append(contentsOf: head.assumingMemoryBound(to: UInt8.self))
        return .miss(Ticket(slot: slot, generation: generation))
    }

    /// Stores the signed head of the head a `.miss` returned `ticket` for, signed at `epochSeconds`.
    mutating func fill(
        _ ticket: Ticket, epochSeconds: Int, signedHead: [UInt8], request: ParsedRequest, logPath: String,
        bucket: String, upstreamIndex: Int
    ) {
        guard ticket.generation == generation, signedHead.count <= Self.maxHeadBytes else { return }
        generation &+= 1
        // Through a local pointer: `entries[…]` and `pendingKey` in one `swap` are two accesses to `self`.
        let entry = entries + ticket.slot
        swap(&entry.pointee.key, &pendingKey)
        entry.pointee.signedHead.removeAll(keepingCapacity: true)
        entry.pointee.signedHead.append(contentsOf: signedHead)
        entry.pointee.request = request
        entry.pointee.logPath = logPath
        entry.pointee.bucket = bucket
        entry.pointee.upstreamIndex = upstreamIndex
        entry.pointee.epochSeconds = epochSeconds
    }

    /// Forgets every entry (a new configuration: other routes, credentials or upstreams).
    mutating func removeAll() {
        entries.update(repeating: Entry(), count: Self.slotCount)
        generation &+= 1
    }

    /// The slot a head maps to.
    static func slot(of head: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: hash(head) >> 32) & (slotCount - 1)
    }

    /// A multiply-rotate hash over 8-byte words (FxHash's mixing); its top bits pick the slot.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let seed: UInt64 = 0x517c_c1b7_2722_0a95
        var hash: UInt64 = UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = ((hash << 5 | hash >> 59) ^ word) &* seed
            offset += 8
        }
        while offset < bytes.count {
            hash = ((hash << 5 | hash >> 59) ^ UInt64(bytes[offset])) &* seed
            offset += 1
        }
        return hash
    }
}
