import PresigndPolicy
import Testing

@Suite struct ActionPatternTests {
    @Test(arguments: [
        ("s3:GetObject", "s3:GetObject", true),
        ("s3:getobject", "s3:GetObject", true),
        ("s3:Get*", "s3:GetObjectTagging", true),
        ("s3:Get*", "s3:PutObject", false),
        ("s3:*", "s3:PutBucketPolicy", true),
        ("s3:*Object", "s3:DeleteObject", true),
        ("s3:*Object", "s3:DeleteObjectTagging", false),
        ("s3:Put?bject", "s3:PutObject", true),
        ("s3:PutObject", "s3:PutObjectAcl", false),
    ])
    func matchesCaseInsensitivelyWithWildcards(pattern: String, action: String, matches: Bool) throws {
        #expect(try #require(ActionPattern(pattern)).matches(action) == matches)
    }

    @Test(arguments: ["GetObject", "s3:", "iam:GetUser", "s3:Get Object", "s3:Get-Object"])
    func rejectsWhatIsNotAnS3ActionPattern(_ text: String) {
        #expect(ActionPattern(text) == nil)
    }

    @Test func namesTheKnownActionsItMatches() throws {
        #expect(try #require(ActionPattern("s3:PutBucketPol*")).knownMatches == ["s3:PutBucketPolicy"])
        #expect(try #require(ActionPattern("s3:PutObjetc")).knownMatches.isEmpty)
    }
}
