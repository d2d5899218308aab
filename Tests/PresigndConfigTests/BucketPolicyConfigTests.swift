import PresigndConfig
import Testing

@Suite struct BucketPolicyConfigTests {
    @Test func readsActionsAndPrincipals() throws {
        let text =
            minimalUpstream + """

                access = "read-write"
                allowed_actions = ["s3:PutBucketPolicy", "s3:GetBucket*"]
                denied_actions = ["s3:DeleteObject*"]
                allow = ["uid:1000", "gid:0", "gid:root", "cidr:10.0.0.0/8", "unix:any", "tcp:any", "token:ci"]
                """
        let bucket = try #require(loaded(text)).buckets[0]
        #expect(bucket.allowedActions.map(\.text) == ["s3:PutBucketPolicy", "s3:GetBucket*"])
        #expect(bucket.deniedActions.map(\.text) == ["s3:DeleteObject*"])
        #expect(
            bucket.allow.map(\.description) == [
                "uid:1000", "gid:0", "gid:0", "cidr:10.0.0.0/8", "unix:any", "tcp:any", "token:ci",
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
}
