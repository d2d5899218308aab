import Foundation
import PresigndConfig
import PresigndTestSupport
import Testing

@Suite struct BucketPolicyConfigTests {
    @Test func readsActionsAndPrincipals() throws {
        let text =
            minimalUpstream + """

                access = "read-write"
                allowed_actions = ["s3:PutBucketPolicy", "s3:GetBucket*"]
                denied_actions = ["s3:DeleteObject*"]
                allow = ["uid:1000", "gid:0", "gid:root", "cidr:10.0.0.0/8", "unix:any", "tcp:any"]
                """
        let bucket = try #require(loaded(text)).buckets[0]
        #expect(bucket.allowedActions.map(\.text) == ["s3:PutBucketPolicy", "s3:GetBucket*"])
        #expect(bucket.deniedActions.map(\.text) == ["s3:DeleteObject*"])
        #expect(
            bucket.allow.map(\.description) == [
                "uid:1000", "gid:0", "gid:0", "cidr:10.0.0.0/8", "unix:any", "tcp:any",
            ])
    }

    @Test func reportsBadActionsAndPrincipalsWithTheirPosition() {
        let text =
            minimalUpstream + """

                allowed_actions = ["s3:PutBucketPolicyy", "GetObject"]
                denied_actions = ["s3:Nothing*"]
                allow = ["uid:alice", "gid:no-such-group-presignd", "cidr:10.0.0.0/33", "unix:some", "user:1"]
                """
        let found = described(errors(text))
        #expect(
            found == [
                "10:20: allowed_actions entry 's3:PutBucketPolicyy' names no S3 action presignd knows; "
                    + "did you mean 's3:PutBucketPolicy'?",
                "10:43: invalid action 'GetObject' in allowed_actions; expected an IAM action such as "
                    + "\"s3:PutBucketPolicy\" or a pattern such as \"s3:Get*\"",
                "11:19: denied_actions entry 's3:Nothing*' names no S3 action presignd knows",
            ]
                + [
                    (10, "uid:alice"), (23, "gid:no-such-group-presignd"), (53, "cidr:10.0.0.0/33"), (73, "unix:some"),
                    (86, "user:1"),
                ].map { column, entry in
                    "12:\(column): invalid allow entry '\(entry)'; expected uid:1000, gid:NAME or gid:100 (a group "
                        + "that exists), cidr:10.0.0.0/8, unix:any, tcp:any or token:NAME"
                })
    }

    @Test func readsTokensAndRefusesAllowEntriesNamingNone() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("ci-token", "0123456789abcdef0123\n")
        let text =
            minimalUpstream + """

                allow = ["token:ci"]
                [token.ci]
                file = "\(path)"
                """
        let configuration = try #require(loaded(text))
        #expect(configuration.tokens["ci"]?.exposedValue == "0123456789abcdef0123")
        #expect(configuration.buckets[0].allow == [.token("ci")])
        let broken =
            minimalUpstream
            + "\nallow = [\"token:cj\"]\n[token.ci]\nfile = \"\(path)\"\n[token.short]\nfile = \"\(path)x\""
        #expect(
            described(errors(broken)).map { $0.split(separator: ":", maxSplits: 2)[2] } == [
                " allow entry 'token:cj' names no [token.cj]; did you mean 'ci'?",
                " cannot read [token.short] file '\(path)x': No such file or directory",
            ])
    }

    @Test func warnsWhenUnixOnlyProxyOpensThePresignAPIOnTCP() throws {
        let unixOnly =
            "[server]\nlisten = [\"unix:/run/p.sock\"]\nadmin_listen = \"127.0.0.1:9180\"\npresign_api = \"open\"\n"
            + minimalUpstream
        let configuration = try #require(loaded(unixOnly))
        #expect(configuration.server.presignAPIAccess == .open)
        #expect(
            configuration.warnings.map(\.message).contains { $0.hasPrefix("the proxy listens on unix sockets only") })
        let unixAdmin =
            "[server]\nlisten = [\"unix:/run/p.sock\"]\nadmin_listen = \"unix:/run/a.sock\"\n" + minimalUpstream
        #expect(try #require(loaded(unixAdmin)).warnings.allSatisfy { !$0.message.contains("presign API") })
    }

    /// Issue 19 §6: on a TCP admin listener the presign API needs a token unless the config opens it; the summary
    /// (check-config, startup log) says what to write to open it.
    @Test func presignAPIOnTCPNeedsATokenUnlessOpened() throws {
        let tokenless = "[server]\nadmin_listen = \"127.0.0.1:9180\"\n" + minimalUpstream
        let closed = try #require(loaded(tokenless))
        #expect(closed.server.presignAPIAccess == .off)
        #expect(closed.warnings.isEmpty)
        #expect(closed.server.presignAPISummary?.contains("set admin_token_file, or presign_api = \"open\"") == true)
        let explicit = "[server]\nadmin_listen = \"127.0.0.1:9180\"\npresign_api = \"off\"\n" + minimalUpstream
        #expect(try #require(loaded(explicit)).server.presignAPISummary == "presign API: off")
        let unixAdmin = "[server]\nadmin_listen = \"unix:/run/a.sock\"\n" + minimalUpstream
        #expect(try #require(loaded(unixAdmin)).server.presignAPIAccess == .open)
        let path = "/tmp/presignd-admin-token-\(getpid())"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("secret-token-1234\n".utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let withToken = "[server]\nadmin_token_file = \"\(path)\"\n" + minimalUpstream
        #expect(try #require(loaded(withToken)).server.presignAPIAccess == .token)
        #expect(
            described(errors("[server]\npresign_api = \"token\"\n" + minimalUpstream)) == [
                "2:1: presign_api = \"token\" needs admin_token_file"
            ])
        #expect(
            described(errors("[server]\npresign_api = \"open\"\nadmin_token_file = \"\(path)\"\n" + minimalUpstream))
                == ["2:1: presign_api = \"open\" and admin_token_file contradict each other; remove one"])
        #expect(
            described(errors("[server]\npresign_api = \"maybe\"\n" + minimalUpstream)).first?.hasPrefix(
                "2:15: invalid presign_api 'maybe'") == true)
    }

    /// Unix socket owners and groups are names the system knows or numbers; the admin socket has its own.
    @Test func unixSocketOwnersResolve() throws {
        let text =
            "[server]\nunix_socket_owner = \"root\"\nunix_socket_group = \"0\"\nadmin_socket_mode = \"0600\"\n"
            + "admin_socket_group = \"root\"\n" + minimalUpstream
        let server = try #require(loaded(text)).server
        #expect(server.unixSocketOwner == 0 && server.unixSocketGroup == 0)
        #expect(server.adminSocketMode == 0o600 && server.adminSocketGroup == 0 && server.adminSocketOwner == nil)
        #expect(
            described(errors("[server]\nadmin_socket_owner = \"no-such-user-xyz\"\n" + minimalUpstream)) == [
                "2:22: 'admin_socket_owner': no user named 'no-such-user-xyz' on this system"
            ])
    }
}
