/// Size limits the decoders enforce while bytes arrive, so a peer can never make a connection hold more than these
/// bounds in decoder state (RFC 9112 §2.3, §3: "a server ... MUST be able to parse any request-line ... it
/// implements" yet may reject overlong ones; RFC 6585 §5 431 for header fields).
public struct DecoderLimits: Sendable, Equatable {
    /// Longest request line (or status line) without its CRLF. Over it: `requestLineTooLong` (414).
    public var maxRequestLineBytes: Int
    /// Longest whole head: start line, field lines and the empty line, CRLFs included. Over it: 431.
    public var maxHeaderBytes: Int
    /// Most field lines in one head. Over it: `tooManyHeaders` (431).
    public var maxHeaderCount: Int
    /// Longest chunk-size line, extensions included, without its CRLF (RFC 9112 §7.1.1). Over it: 400.
    public var maxChunkLineBytes: Int
    /// Most bytes of a chunked trailer section, CRLFs included (RFC 9112 §7.1.2). Over it: 400.
    public var maxTrailerBytes: Int

    public init(
        maxRequestLineBytes: Int = 8192,
        maxHeaderBytes: Int = 65536,
        maxHeaderCount: Int = 100,
        maxChunkLineBytes: Int = 4096,
        maxTrailerBytes: Int = 16384
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxChunkLineBytes = maxChunkLineBytes
        self.maxTrailerBytes = maxTrailerBytes
    }

    /// Empty lines (CRLF) ignored before a start line (RFC 9112 §2.2 asks for at least one); more is an error.
    static let maxLeadingEmptyLines = 4
}
