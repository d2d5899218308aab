/// How a stream's reading (or the whole stream) ended, as its delegate hears it.
public enum StreamEnd: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer closed its side in order (FIN; for TLS also without close_notify). Writing may go on.
    case endOfFile
    /// The peer aborted (ECONNRESET, EPIPE): whatever it sent last may be incomplete.
    case reset
    /// Nothing arrived for the read timeout while reading was enabled. Reading is off; the stream stays open.
    case readTimeout
    /// Pending output made no progress for the write timeout. The stream stays open; its owner closes it.
    case writeTimeout
    /// Any other failure: `errno` text, or TLS error text with OpenSSL's queue drained into it.
    case failed(String)

    public var description: String {
        switch self {
        case .endOfFile: "end of file"
        case .reset: "connection reset by peer"
        case .readTimeout: "read timeout"
        case .writeTimeout: "write timeout"
        case .failed(let reason): reason
        }
    }
}

/// What a stream tells its owner. Calls come from the loop, never from inside a call the owner made on the stream
/// (a failure found inside `flush()` or `enableReading()` is reported on the next loop iteration).
public protocol StreamDelegate: AnyObject {
    /// `input` holds new bytes.
    func streamReadable()
    /// A write made by the loop (not one made inside `flush()`) brought `output` down to `lowWatermark` from above
    /// it, or emptied it.
    func streamDrained()
    /// Reading ended, or the stream failed; see `StreamEnd` for what still works.
    func streamEnded(_ end: StreamEnd)
}

/// A stream's delegate, held unowned, as the stored property of a stream keeps it. Replacing it swaps the slot
/// (`swap(&slot, &owner)`): the old reference is let go after the store, not inside it. A release inside a store
/// could run a deinit, so the compiler would check the property's exclusivity at run time on every access (about a
/// hundred instructions each, several times a request); with the swap the whole-module optimizer checks it
/// statically.
struct StreamOwner {
    unowned let delegate: StreamDelegate

    /// Stores `delegate` into `slot`, the old one let go after the store.
    static func replace(_ slot: inout StreamOwner?, with delegate: StreamDelegate?) {
        var replacement = delegate.map(StreamOwner.init)
        swap(&replacement, &slot)
    }
}

/// A connected byte stream: a socket (`SocketStream`), plain or a TLS client connection. The proxy
/// codes against this. A new stream is not reading; its owner enables reading when it wants bytes.
public protocol ByteStream: AnyObject {
    /// What arrived and was not consumed yet; the owner drains what it uses.
    var input: IOBuffer { get }
    /// What waits to be sent; the owner appends and calls `flush()`.
    var output: IOBuffer { get }
    /// Not retained: the delegate owns the stream (or outlives it).
    var delegate: StreamDelegate? { get set }
    func enableReading()
    func disableReading()
    var isReading: Bool { get }
    /// 0 = none. The read timeout counts from the last byte read while reading is enabled; the write timeout
    /// from the last progress while output is pending. Setting them restarts both counts.
    func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int)
    /// Writes what `output` holds now if the peer takes it, and leaves the rest to the loop.
    func flush()
    /// Appends `bytes` to the output; with nothing queued they are sent at once instead (`send`, or `SSL_write`
    /// on an established TLS connection).
    func write(_ bytes: [UInt8]) throws(IOError)
    /// Closes now; unsent output is dropped. No delegate call follows. Idempotent.
    func close()
    /// Closes so that the peer sees a reset (`SO_LINGER` 0) instead of a FIN: for a body that cannot be marked
    /// truncated any other way.
    func reset()
    /// `streamDrained` fires when output falls to this many bytes (0: when it empties).
    var lowWatermark: Int { get set }
    /// After `close()` or `reset()`.
    var isClosed: Bool { get }
}
