import PresigndConfig
import PresigndPolicy
import Testing

@testable import PresigndProxy

/// A DeleteObjects body naming `keys`.
func deleteBody(_ keys: String...) -> String {
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        + keys.map { "<Object><Key>\($0)</Key></Object>" }.joined() + "<Quiet>true</Quiet></Delete>"
}

func copyFrom(_ source: String) -> [(String, String)] { [("x-amz-copy-source", source)] }

/// The policy spec (issue 19): request, principal → operation, decision; through the code the proxy runs.
@Suite struct PolicySpecTests {
    static let objectRows: [PolicySpecRow] = [
        spec("GET /rw/k", "GetObject", "allow"),
        spec("GET /rw/k?versionId=3", "GetObject", "allow"),
        spec("GET /rw/k?response-content-type=text/plain&x-id=GetObject", "GetObject", "allow"),
        spec("GET /rw/k?partNumber=2", "GetObject", "allow"),
        spec("GET /ro/k", "GetObject", "allow"),
        spec("HEAD /rw/k", "HeadObject", "allow"),
        spec("HEAD /ro/a/b/c", "HeadObject", "allow"),
        spec("PUT /rw/k", "PutObject", "allow", body: "x"),
        spec("PUT /ro/k", "PutObject", "403", body: "x"),
        spec("PUT /rw/k", "CopyObject", "allow", headers: copyFrom("/rw/other")),
        spec("PUT /rw/k", "CopyObject", "allow", headers: copyFrom("ro/other")),
        spec("PUT /ro/k", "CopyObject", "403", headers: copyFrom("/rw/other")),
        spec("DELETE /rw/k", "DeleteObject", "allow"),
        spec("DELETE /rw/k?versionId=7", "DeleteObject", "allow"),
        spec("DELETE /ro/k", "DeleteObject", "403"),
        spec("GET /rw/k?tagging", "GetObjectTagging", "allow"),
        spec("GET /ro/k?tagging", "GetObjectTagging", "allow"),
        spec("PUT /rw/k?tagging", "PutObjectTagging", "allow", body: "<Tagging/>"),
        spec("PUT /ro/k?tagging", "PutObjectTagging", "403", body: "<Tagging/>"),
        spec("DELETE /rw/k?tagging", "DeleteObjectTagging", "allow"),
        spec("DELETE /ro/k?tagging", "DeleteObjectTagging", "403"),
        spec("GET /rw/k?acl", "GetObjectAcl", "403"),
        spec("PUT /rw/k?acl", "PutObjectAcl", "403", body: "<AccessControlPolicy/>"),
        spec("PUT /acl/k?acl", "PutObjectAcl", "allow", body: "<AccessControlPolicy/>"),
        spec("GET /rw/k?attributes", "GetObjectAttributes", "allow"),
        spec("GET /rw/k?retention", "GetObjectRetention", "403"),
        spec("PUT /rw/k?retention", "PutObjectRetention", "403", body: "x"),
        spec("GET /rw/k?legal-hold", "GetObjectLegalHold", "403"),
        spec("PUT /rw/k?legal-hold", "PutObjectLegalHold", "403", body: "x"),
        spec("GET /rw/k?torrent", "GetObjectTorrent", "403"),
        spec("POST /rw/k?restore", "RestoreObject", "403", body: "x"),
        spec("POST /rw/k?select&select-type=2", "SelectObjectContent", "allow", body: "x"),
        spec("POST /ro/k?select&select-type=2", "SelectObjectContent", "allow", body: "x"),
    ]

    static let multipartRows: [PolicySpecRow] = [
        spec("POST /rw/k?uploads", "CreateMultipartUpload", "allow"),
        spec("POST /ro/k?uploads", "CreateMultipartUpload", "403"),
        spec("PUT /rw/k?partNumber=1&uploadId=u", "UploadPart", "allow", body: "x"),
        spec("PUT /ro/k?partNumber=1&uploadId=u", "UploadPart", "403", body: "x"),
        spec("PUT /rw/k?uploadId=u", "unknown", "403", body: "x"),
        spec("PUT /rw/k?partNumber=1", "unknown", "403", body: "x"),
        spec(
            "PUT /rw/k?partNumber=1&uploadId=u", "UploadPartCopy", "allow",
            headers: copyFrom("/rw/src") + [("x-amz-copy-source-range", "bytes=0-9")]),
        spec("PUT /rw/k?partNumber=1&uploadId=u", "UploadPartCopy", "403", headers: copyFrom("/far/src")),
        spec("POST /rw/k?uploadId=u", "CompleteMultipartUpload", "allow", body: "<CompleteMultipartUpload/>"),
        spec("POST /ro/k?uploadId=u", "CompleteMultipartUpload", "403", body: "x"),
        spec("DELETE /rw/k?uploadId=u", "AbortMultipartUpload", "allow"),
        spec("DELETE /ro/k?uploadId=u", "AbortMultipartUpload", "403"),
        spec("GET /rw/k?uploadId=u", "ListParts", "allow"),
        spec("GET /ro/k?uploadId=u&max-parts=10&part-number-marker=2", "ListParts", "allow"),
        spec("GET /rw?uploads", "ListMultipartUploads", "allow"),
        spec("GET /ro?uploads&prefix=a/&max-uploads=5", "ListMultipartUploads", "allow"),
        spec("GET /pfx?uploads", "ListMultipartUploads", "403"),
        spec("GET /pfx?uploads&prefix=incoming/", "ListMultipartUploads", "allow"),
    ]

    static let bucketRows: [PolicySpecRow] = [
        spec("GET /rw", "ListObjects", "allow"),
        spec("GET /rw/?prefix=a/&delimiter=/&marker=m&max-keys=10", "ListObjects", "allow"),
        spec("GET /rw?list-type=2&continuation-token=t&start-after=a&fetch-owner=true", "ListObjectsV2", "allow"),
        spec("GET /ro?list-type=2&encoding-type=url", "ListObjectsV2", "allow"),
        spec("GET /rw?versions", "ListObjectVersions", "allow"),
        spec("GET /ro?versions&key-marker=a&version-id-marker=b", "ListObjectVersions", "allow"),
        spec("HEAD /rw", "HeadBucket", "allow"),
        spec("HEAD /ro", "HeadBucket", "allow"),
        spec("GET /rw?location", "GetBucketLocation", "allow"),
        spec("POST /rw?delete", "DeleteObjects", "allow", body: deleteBody("a", "b")),
        spec("POST /ro?delete", "DeleteObjects", "403", body: deleteBody("a")),
        spec("PUT /rw", "CreateBucket", "403"),
        spec("DELETE /rw", "DeleteBucket", "403"),
        spec("DELETE /ro", "DeleteBucket", "403"),
    ]

    /// Every bucket-configuration operation: in neither access level.
    static let configurationRows: [PolicySpecRow] = [
        spec("GET /rw?policy", "GetBucketPolicy", "403"),
        spec("PUT /rw?policy", "PutBucketPolicy", "403", body: "{}"),
        spec("DELETE /rw?policy", "DeleteBucketPolicy", "403"),
        spec("GET /rw?policyStatus", "GetBucketPolicyStatus", "403"),
        spec("GET /ro?acl", "GetBucketAcl", "403"),
        spec("PUT /rw?acl", "PutBucketAcl", "403", body: "x"),
        spec("GET /rw?lifecycle", "GetBucketLifecycleConfiguration", "403"),
        spec("PUT /rw?lifecycle", "PutBucketLifecycleConfiguration", "403", body: "x"),
        spec("DELETE /rw?lifecycle", "DeleteBucketLifecycle", "403"),
        spec("GET /rw?cors", "GetBucketCors", "403"),
        spec("PUT /rw?cors", "PutBucketCors", "403", body: "x"),
        spec("DELETE /rw?cors", "DeleteBucketCors", "403"),
        spec("GET /rw?website", "GetBucketWebsite", "403"),
        spec("PUT /rw?website", "PutBucketWebsite", "403", body: "x"),
        spec("DELETE /rw?website", "DeleteBucketWebsite", "403"),
        spec("GET /rw?versioning", "GetBucketVersioning", "403"),
        spec("PUT /rw?versioning", "PutBucketVersioning", "403", body: "x"),
        spec("GET /rw?encryption", "GetBucketEncryption", "403"),
        spec("PUT /rw?encryption", "PutBucketEncryption", "403", body: "x"),
        spec("DELETE /rw?encryption", "DeleteBucketEncryption", "403"),
        spec("GET /rw?replication", "GetBucketReplication", "403"),
        spec("PUT /rw?replication", "PutBucketReplication", "403", body: "x"),
        spec("DELETE /rw?replication", "DeleteBucketReplication", "403"),
        spec("GET /rw?tagging", "GetBucketTagging", "403"),
        spec("PUT /rw?tagging", "PutBucketTagging", "403", body: "x"),
        spec("DELETE /rw?tagging", "DeleteBucketTagging", "403"),
        spec("GET /rw?logging", "GetBucketLogging", "403"),
        spec("PUT /rw?logging", "PutBucketLogging", "403", body: "x"),
        spec("GET /rw?notification", "GetBucketNotificationConfiguration", "403"),
        spec("PUT /rw?notification", "PutBucketNotificationConfiguration", "403", body: "x"),
        spec("GET /rw?requestPayment", "GetBucketRequestPayment", "403"),
        spec("PUT /rw?requestPayment", "PutBucketRequestPayment", "403", body: "x"),
        spec("GET /rw?accelerate", "GetBucketAccelerateConfiguration", "403"),
        spec("PUT /rw?accelerate", "PutBucketAccelerateConfiguration", "403", body: "x"),
        spec("GET /rw?object-lock", "GetObjectLockConfiguration", "403"),
        spec("PUT /rw?object-lock", "PutObjectLockConfiguration", "403", body: "x"),
        spec("GET /rw?ownershipControls", "GetBucketOwnershipControls", "403"),
        spec("PUT /rw?ownershipControls", "PutBucketOwnershipControls", "403", body: "x"),
        spec("DELETE /rw?ownershipControls", "DeleteBucketOwnershipControls", "403"),
        spec("GET /rw?publicAccessBlock", "GetPublicAccessBlock", "403"),
        spec("PUT /rw?publicAccessBlock", "PutPublicAccessBlock", "403", body: "x"),
        spec("DELETE /rw?publicAccessBlock", "DeletePublicAccessBlock", "403"),
    ]

    /// `allowed_actions` / `denied_actions` / `allowed_methods`.
    static let actionRows: [PolicySpecRow] = [
        spec("PUT /admin?policy", "PutBucketPolicy", "allow", body: "{}"),
        spec("GET /admin?policy", "GetBucketPolicy", "allow"),
        spec("GET /admin?versioning", "GetBucketVersioning", "allow"),
        spec("GET /admin?acl", "GetBucketAcl", "allow"),
        spec("PUT /admin?lifecycle", "PutBucketLifecycleConfiguration", "allow", body: "x"),
        spec("DELETE /admin?lifecycle", "DeleteBucketLifecycle", "allow"),
        spec("DELETE /admin?policy", "DeleteBucketPolicy", "403"),
        spec("PUT /admin?acl", "PutBucketAcl", "403", body: "x"),
        spec("DELETE /admin/k", "DeleteObject", "403"),
        spec("DELETE /admin/k?versionId=1", "DeleteObject", "403"),
        spec("POST /admin?delete", "DeleteObjects", "403", body: deleteBody("k")),
        spec("PUT /admin/k", "PutObject", "allow", body: "x"),
        spec("PUT /rw/k", "PutObject", "allow", headers: [("x-amz-tagging", "a=b")], body: "x"),
        spec("PUT /admin/k", "PutObject", "403", headers: [("x-amz-tagging", "a=b")], body: "x"),
        spec("PUT /admin/k?tagging", "PutObjectTagging", "403", body: "<Tagging/>"),
        spec("PUT /ro/k", "CopyObject", "403", headers: copyFrom("/rw/a") + [("x-amz-tagging", "a=b")]),
        spec("GET /meth/k", "GetObject", "allow"),
        spec("PUT /meth/k", "PutObject", "allow", body: "x"),
        spec("DELETE /meth/k", "DeleteObject", "403"),
        spec("POST /meth?delete", "DeleteObjects", "403", body: deleteBody("k")),
        spec("POST /meth/k?uploads", "CreateMultipartUpload", "403"),
        spec("PUT /meth?policy", "PutBucketPolicy", "403", body: "{}"),
        spec("PUT /rw/k", "PutObject", "403", headers: [("x-amz-acl", "public-read")], body: "x"),
        spec("PUT /rw/k", "PutObject", "allow", headers: [("x-amz-acl", "private")], body: "x"),
        spec("PUT /rw/k", "PutObject", "allow", headers: [("X-Amz-Acl", "PRIVATE")], body: "x"),
        spec("PUT /rw/k", "PutObject", "403", headers: [("x-amz-grant-read", "uri=x")], body: "x"),
        spec("PUT /rw/k", "CopyObject", "403", headers: copyFrom("/rw/a") + [("X-Amz-Acl", "public-read")]),
        spec("PUT /acl/k", "PutObject", "allow", headers: [("x-amz-acl", "public-read")], body: "x"),
        spec("POST /rw/k?uploads", "CreateMultipartUpload", "403", headers: [("x-amz-acl", "public-read")]),
        spec("PUT /acl?acl", "PutBucketAcl", "403", headers: [("x-amz-acl", "public-read")]),
        spec(
            "PUT /rw/k", "PutObject", "403", headers: [("x-amz-object-lock-mode", "COMPLIANCE")], body: "x"),
        spec("PUT /rw/k", "PutObject", "403", headers: [("X-Amz-Object-Lock-Legal-Hold", "ON")], body: "x"),
        spec("DELETE /rw/k", "DeleteObject", "403", headers: [("x-amz-bypass-governance-retention", "true")]),
        spec("PUT /lock/k", "PutObject", "allow", headers: [("x-amz-object-lock-mode", "GOVERNANCE")], body: "x"),
        spec("DELETE /lock/k", "DeleteObject", "allow", headers: [("x-amz-bypass-governance-retention", "true")]),
        spec("PUT /lock/k?retention", "PutObjectRetention", "allow", body: "x"),
        spec("PUT /admin/k", "PutObject", "403", headers: [("x-amz-grant-full-control", "id=x")], body: "x"),
    ]

    /// `allowed_prefixes`: path keys, DeleteObjects bodies, copy sources, listings.
    static let prefixRows: [PolicySpecRow] = [
        spec("GET /pfx/incoming/a", "GetObject", "allow"),
        spec("PUT /pfx/incoming/a", "PutObject", "allow", body: "x"),
        spec("GET /pfx/secret/a", "GetObject", "403"),
        spec("GET /pfx/incomingx/a", "GetObject", "403"),
        spec("GET /pfx/%69ncoming/a", "GetObject", "allow"),
        spec("GET /pfx/%73ecret/a", "GetObject", "403"),
        spec("DELETE /pfx/secret/a", "DeleteObject", "403"),
        spec("GET /pfx", "ListObjects", "403"),
        spec("GET /pfx?prefix=incoming/", "ListObjects", "allow"),
        spec("GET /pfx?list-type=2&prefix=incoming/x&start-after=zzz", "ListObjectsV2", "allow"),
        spec("GET /pfx?list-type=2&prefix=secret/", "ListObjectsV2", "403"),
        spec("GET /pfx?list-type=2&prefix=incoming/&prefix=secret/", "ListObjectsV2", "403"),
        spec("GET /pfx?list-type=2&prefix=", "ListObjectsV2", "403"),
        spec("GET /pfx?versions&prefix=secret/", "ListObjectVersions", "403"),
        spec("GET /pfx?versions&prefix=incoming/", "ListObjectVersions", "allow"),
        spec("POST /pfx/incoming/x?delete", "unknown", "403", body: deleteBody("secret/a")),
        spec("POST /pfx?delete", "DeleteObjects", "allow", body: deleteBody("incoming/a", "incoming/b")),
        spec("POST /pfx?delete", "DeleteObjects", "403", body: deleteBody("incoming/a", "secret/b")),
        spec(
            "POST /pfx?delete", "DeleteObjects", "400 InvalidURI", body: deleteBody("incoming/a", "incoming/../secret")),
        spec("POST /rw?delete", "DeleteObjects", "400 InvalidURI", body: deleteBody("a/./b")),
        spec("POST /pfx?delete", "DeleteObjects", "allow", body: deleteBody("incoming/a&amp;b")),
        spec("POST /pfx?delete", "DeleteObjects", "403", body: deleteBody("&#x73;ecret/b")),
        spec("POST /pfx?delete", "DeleteObjects", "400 MalformedXML", body: "<Delete><!-- x --></Delete>"),
        spec(
            "POST /pfx?delete", "DeleteObjects", "400 MalformedXML",
            body: "<Delete><Object><s3:Key>a</s3:Key></Object></Delete>"),
        spec("POST /pfx?delete", "DeleteObjects", "400 MalformedXML", body: "<Delete><Key>incoming/a</Key></Delete>"),
        spec("POST /pfx?delete", "DeleteObjects", "400 MalformedXML", body: "not xml"),
        spec("PUT /pfx/incoming/a", "CopyObject", "allow", headers: copyFrom("/src/shared/x")),
        spec("PUT /pfx/incoming/a", "CopyObject", "403", headers: copyFrom("/src/private/x")),
        spec("PUT /pfx/incoming/a", "CopyObject", "403", headers: copyFrom("/pfx/secret/x")),
        spec("PUT /pfx/incoming/a", "CopyObject", "allow", headers: copyFrom("/pfx/incoming/x?versionId=2")),
        spec("PUT /pfx/incoming/a", "CopyObject", "403", headers: copyFrom("/unconfigured/x")),
        spec("PUT /pfx/incoming/a", "CopyObject", "403", headers: copyFrom("/far/x")),
        spec("PUT /pfx/secret/a", "CopyObject", "403", headers: copyFrom("/src/shared/x")),
        spec("PUT /rw/k", "CopyObject", "403", headers: copyFrom("/users/x"), as: PolicySpecRow.lan),
    ]

    /// Built-in refusals: dot segments, method overrides, SigV2, headers in the query, unknown forms.
    static let hardeningRows: [PolicySpecRow] = [
        spec("GET /rw/a/../b", "unknown", "400 InvalidURI"),
        spec("GET /rw/a/./b", "unknown", "400 InvalidURI"),
        spec("GET /rw/a/%2e%2E/b", "unknown", "400 InvalidURI"),
        spec("GET /rw/a/%2E/b", "unknown", "400 InvalidURI"),
        spec("GET /rw/..", "unknown", "400 InvalidURI"),
        spec("GET /rw/a/..b", "GetObject", "allow"),
        spec("GET /rw/k", "unknown", "400 InvalidRequest", headers: [("X-HTTP-Method-Override", "DELETE")]),
        spec("POST /rw/k", "unknown", "400 InvalidRequest", headers: [("x-http-method", "DELETE")]),
        spec("GET /rw/k", "unknown", "400 InvalidRequest", headers: [("X-Method-Override", "PUT")]),
        spec("GET /rw/k?AWSAccessKeyId=A&Signature=s&Expires=1", "unknown", "400 AuthorizationQueryParametersError"),
        spec("GET /rw/k?Expires=1", "unknown", "400 AuthorizationQueryParametersError"),
        spec("GET /rw/k?Signature=x", "unknown", "400 AuthorizationQueryParametersError"),
        spec("PUT /rw/k?x-amz-copy-source=/rw/a", "unknown", "400 InvalidRequest"),
        spec("PUT /rw/k?X-Amz-Copy-Source-Range=bytes=0-1", "unknown", "400 InvalidRequest"),
        spec("PUT /rw/k?x-amz-acl=public-read", "unknown", "400 InvalidRequest", body: "x"),
        spec("PUT /rw/k?x-amz-grant-read=x", "unknown", "400 InvalidRequest", body: "x"),
        spec("GET /rw/k?foo", "unknown", "403"),
        spec("GET /rw?analytics", "unknown", "403"),
        spec("GET /rw/k?acl&tagging", "unknown", "403"),
        spec("PATCH /rw/k", "unknown", "403", body: "x"),
        spec("OPTIONS /rw/k", "unknown", "403"),
        spec("POST /rw/k", "unknown", "403", body: "x"),
        spec("POST /rw?delete&uploads", "unknown", "403", body: "x"),
        spec("GET /rw/k", "unknown", "403", headers: copyFrom("/rw/a")),
        spec("PUT /rw/k", "unknown", "403", headers: [("x-amz-copy-source-range", "bytes=0-1")], body: "x"),
        spec("PUT /rw/k", "unknown", "403", headers: copyFrom("/rw/a") + [("x-amz-copy-source-range", "bytes=0-1")]),
        spec("PUT /rw/k", "CopyObject", "400 InvalidURI", headers: copyFrom("/rw/a/../b")),
        spec("GET /rw?uploadId=u", "unknown", "403"),
        spec("POST /rw/k?delete", "unknown", "403", body: deleteBody("k")),
    ]

    /// `allow` lists: unix peer credentials and TCP source addresses.
    static let principalRows: [PolicySpecRow] = [
        spec("GET /users/k", "GetObject", "allow"),
        spec("GET /users/k", "GetObject", "allow", as: PolicySpecRow.otherUser),
        spec("GET /users/k", "GetObject", "403", as: Principal(peer: .unix(uid: 0, gid: 0, pid: 3))),
        spec("PUT /users/k", "PutObject", "403", body: "x", as: PolicySpecRow.lan),
        spec("GET /users/k", "GetObject", "403", as: Principal(peer: .unknown)),
        spec("GET /net/k", "GetObject", "allow", as: PolicySpecRow.lan),
        spec("GET /net/k", "GetObject", "403", as: PolicySpecRow.wan),
        spec("GET /net/k", "GetObject", "403"),
        spec("PUT /net/k", "PutObject", "403", body: "x", as: PolicySpecRow.lan),
        spec("GET /rw/k", "GetObject", "allow", as: PolicySpecRow.wan),
        spec("GET /tok/k", "GetObject", "allow", headers: [("Authorization", "Bearer " + PolicySpecRow.ciToken)]),
        spec(
            "GET /tok/k", "GetObject", "allow", headers: [("authorization", "bearer " + PolicySpecRow.ciToken)],
            as: PolicySpecRow.wan),
        spec("GET /tok/k", "GetObject", "403"),
        spec("GET /tok/k", "GetObject", "403", headers: [("Authorization", "Bearer other-token-0123456789")]),
        spec("GET /tok/k", "unknown", "403", headers: [("Authorization", "Bearer not-a-token")]),
        spec("GET /rw/k", "unknown", "403", headers: [("Authorization", "Bearer not-a-token")]),
        spec("GET /rw/k", "GetObject", "allow", headers: [("Authorization", "AWS4-HMAC-SHA256 Credential=x")]),
    ]

    /// Redirect mode asks the same engine before it presigns anything.
    static let redirectRows: [PolicySpecRow] = [
        spec("GET /redir/pub/a", "GetObject", "allow"),
        spec("HEAD /redir/pub/a?versionId=2", "HeadObject", "allow"),
        spec("GET /redir/secret/a", "GetObject", "403"),
        spec("GET /redir/pub/a?acl", "GetObjectAcl", "403"),
        spec("DELETE /redir/pub/a", "DeleteObject", "403"),
        spec("GET /redir/pub/a/../../secret", "unknown", "400 InvalidURI"),
    ]

    static let all =
        objectRows + multipartRows + bucketRows + configurationRows + actionRows + prefixRows + hardeningRows
        + principalRows + redirectRows

    @Test(arguments: all)
    func decidesAsSpecified(_ row: PolicySpecRow) {
        let got = PolicySpecSettings.explain(row)
        #expect(got.operation == row.operation, "\(got.lines.joined(separator: "\n"))")
        let decision = got.isAllowed ? "allow" : got.status == 403 ? "403" : "\(got.status) \(got.code ?? "")"
        #expect(decision == row.decision, "\(got.lines.joined(separator: "\n"))")
        if !got.isAllowed && got.status == 403 { #expect(got.code == "AccessDenied") }
    }

    @Test func redirectModeRedirectsOnlyWhatTheEngineAllows() {
        #expect(PolicySpecSettings.explain(spec("GET /redir/pub/a", "GetObject", "allow")).rule == "redirect")
        #expect(PolicySpecSettings.explain(spec("GET /redir/secret/a", "GetObject", "403")).rule == "allowed_prefixes")
    }

    @Test func specHasAtLeast150RowsAndCoversEveryOperation() {
        #expect(Self.all.count >= 150)
        let covered = Set(Self.all.map(\.operation))
        let missing = S3Operation.allCases.map(\.rawValue).filter { !covered.contains($0) }
        #expect(missing.isEmpty, "operations without a spec row: \(missing)")
    }
}
