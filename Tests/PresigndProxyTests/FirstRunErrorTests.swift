import PresigndIO
import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// The errors a first run meets say what happened and what to do (issue 24).
@Suite struct FirstRunErrorTests {
    @Test func aPortInUseNamesTheAddressAndHowToFindTheProgram() throws {
        let holder = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        defer { close(holder.fd) }
        let port = try #require(holder.boundAddress.split(separator: ":").last.flatMap { Int($0) })
        do {
            let second = try ListenSocket.tcp(host: "127.0.0.1", port: port)
            close(second.fd)
            Issue.record("a second listener on \(holder.boundAddress) was bound")
        } catch {
            #expect(
                StartupError(error).description
                    == "cannot listen on 127.0.0.1:\(port): bind: Address already in use; another program (or another "
                    + "presignd) is listening there: find it with `ss -ltnp 'sport = :\(port)'` and stop it, or set a "
                    + "free port for this address in listen or admin_listen")
        }
    }

    @Test func anAddressThisMachineDoesNotHaveSaysSo() {
        // The text alone: binding a non-loopback address, even one that fails, is not for tests here.
        #expect(
            StartupError.socket(address: "192.0.2.1:8080", call: "bind", errno: EADDRNOTAVAIL).description
                == "cannot listen on 192.0.2.1:8080: bind: Cannot assign requested address; no network interface of "
                + "this machine has that address: use 127.0.0.1, [::1] or an address `ip -brief address` lists")
    }

    @Test func aUnixSocketPathHeldByAFileSaysWhatToRemove() throws {
        let path = "/tmp/presignd-first-run-\(getpid()).sock"
        let file = open(path, O_CREAT | O_WRONLY, 0o600)
        #expect(file >= 0)
        close(file)
        defer { unlink(path) }
        do {
            let socket = try ListenSocket.unix(path: path, access: UnixSocketAccess(mode: 0o660))
            close(socket.fd)
            Issue.record("bound over a regular file")
        } catch {
            #expect(
                StartupError(error).description.hasSuffix(
                    "something that is not a socket exists at \(path): remove it or "
                        + "choose another path in listen"))
        }
    }

    @Test func otherSocketErrorsStayAsTheSystemSaysThem() {
        #expect(
            StartupError.socket(address: "127.0.0.1:8080", call: "listen", errno: EADDRINUSE).description
                == "cannot listen on 127.0.0.1:8080: listen: Address already in use")
    }

    @Test(arguments: [
        (ProxyError.noSuchBucket("videos"), "presignd check-config lists them"),
        (ProxyError.upstreamDNS("Name or service not known"), "account_id: the Account ID"),
        (ProxyError.upstreamConnect("Connection refused"), "and that the storage service is running there"),
        (ProxyError.upstreamTLS("wrong version number"), "set ca_file"),
        (ProxyError.upstreamTimeout, "first_byte_timeout"),
    ])
    func upstreamAndRoutingErrorsSayWhatToCheck(error: ProxyError, advice: String) {
        #expect(error.message.contains(advice))
        let body = String(decoding: error.xmlBody(requestID: "R1", resource: "/x"), as: UTF8.self)
        #expect(body.contains("<Code>\(error.statusAndCode.code)</Code><Message>"))
        // Quotes and the like arrive escaped in the XML body.
        #expect(!body.contains("\"r2\""))
    }
}
