import PresigndHTTP1
import PresigndPolicy
import Testing

@testable import PresigndProxy

/// Reading a held body: only a document whose root is `Error` carries a code (S3's 200-with-error included).
@Suite struct HeldAnswerTests {
    static func code(_ body: String) -> String? {
        var held = HeldAnswer(head: ResponseHead(status: 200))
        held.body = Array(body.utf8)
        return held.s3ErrorCode
    }

    @Test func readsTheCodeOfAnS3ErrorBody() {
        #expect(
            Self.code("<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>x</Message></Error>") == "SlowDown")
        #expect(Self.code("<html>busy</html>") == nil)
    }

    @Test func readsTheCodeAfterS3sWhitespacePadding() {
        let padded = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + String(repeating: " \n", count: 40)
        #expect(
            Self.code(padded + "<Error><Code>InternalError</Code><Message>retry</Message></Error>") == "InternalError")
        #expect(Self.code("   \n<Error><Code>SlowDown</Code><RequestId>1</RequestId></Error>\n") == "SlowDown")
    }

    @Test(arguments: [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n   <CompleteMultipartUploadResult><ETag>\"x-2\"</ETag></CompleteMultipartUploadResult>",
        "<CopyObjectResult><ETag>\"e\"</ETag><LastModified>2026-12-06T00:00:00Z</LastModified></CopyObjectResult>",
        "<Result><Error><Code>InternalError</Code></Error></Result>",
        "<Error><Code>InternalError</Code></Error><Error><Code>SlowDown</Code></Error>",
        "<Error><Code>InternalError</Code>",
        "<!-- x --><Error><Code>InternalError</Code></Error>",
        "", "     ",
    ])
    func findsNoCodeOutsideARootError(body: String) {
        #expect(Self.code(body) == nil)
    }

    @Test func namesExactlyTheOperationsS3MayFailAfterA200() {
        let named = Set(S3Operation.allCases.filter(\.mayFailAfterSuccessStatus))
        #expect(named == [.completeMultipartUpload, .copyObject, .uploadPartCopy])
    }
}
