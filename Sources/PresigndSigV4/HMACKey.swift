/// HMAC-SHA256 (RFC 2104) with the key absorbed once: the SHA-256 states after `key ⊕ ipad` and
/// `key ⊕ opad`.
///
/// A MAC then costs two state copies and the message's blocks, and allocates nothing. The signer keeps one for
/// kSigning per scope date (SIGV4-S3-RULES §6); `wipe()` zeroes it when it is dropped.
struct HMACKey {
    private var inner: SHA256State
    private var outer: SHA256State

    /// Keys with the concatenation `prefix + key` (the SigV4 secret is `"AWS4" + secret`, §1) without
    /// assembling it on the heap.
    init(prefix: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0), key: UnsafeRawBufferPointer)
        throws(SigV4Error)
    {
        var block: (Digest32, Digest32) = ((0, 0, 0, 0), (0, 0, 0, 0))  // one 64-byte SHA-256 block
        defer { withUnsafeMutableBytes(of: &block) { wipeSecret($0) } }
        var inner = try SHA256State()
        var outer = try SHA256State()
        try withUnsafeMutableBytes(of: &block) { (pad) throws(SigV4Error) in
            guard let base = pad.baseAddress else { return }
            if prefix.count + key.count > pad.count {
                // RFC 2104 §2: a key longer than the block is replaced by its hash.
                var hash = try SHA256State()
                defer { hash.wipe() }
                try hash.update(prefix)
                try hash.update(key)
                try hash.finish(into: base)
            } else {
                if let start = prefix.baseAddress { base.copyMemory(from: start, byteCount: prefix.count) }
                if let start = key.baseAddress { (base + prefix.count).copyMemory(from: start, byteCount: key.count) }
            }
            for index in 0..<pad.count { pad[index] ^= 0x36 }
            try inner.update(UnsafeRawBufferPointer(pad))
            for index in 0..<pad.count { pad[index] ^= 0x36 ^ 0x5C }
            try outer.update(UnsafeRawBufferPointer(pad))
        }
        self.inner = inner
        self.outer = outer
    }

    /// HMAC(key, message) into `output`, which must hold 32 bytes.
    func authenticate(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws(SigV4Error) {
        var state = inner
        defer { state.wipe() }
        try state.update(message)
        try state.finish(into: output)  // H(K ⊕ ipad ‖ m), consumed below before it is overwritten
        state = outer
        try state.update(UnsafeRawBufferPointer(start: output, count: 32))
        try state.finish(into: output)
    }

    /// HMAC(key, message) into `output`.
    func authenticate(_ message: UnsafeRawBufferPointer, into output: inout Digest32) throws(SigV4Error) {
        try withUnsafeMutableBytes(of: &output) { (raw) throws(SigV4Error) in
            guard let base = raw.baseAddress else { return }
            try authenticate(message, into: base)
        }
    }

    /// Zeroes both keyed states.
    mutating func wipe() {
        inner.wipe()
        outer.wipe()
    }
}
