import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct PeerCredentialsTests {
    @Test func readsTheKernelsRecordOfAUnixPeer() throws {
        let (a, b) = socketPair()
        defer {
            close(a)
            close(b)
        }
        let credentials = try #require(PeerCredentials(fd: a))
        #expect(credentials.pid == getpid() && credentials.uid == getuid() && credentials.gid == getgid())
    }

    @Test func hasNoneForATCPPeer() throws {
        let (a, b) = try tcpPair()
        defer {
            close(a)
            close(b)
        }
        #expect(PeerCredentials(fd: a) == nil)
    }
}
