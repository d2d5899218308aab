import Testing

@testable import PresigndPolicy

@Suite struct OperationTableTests {
    @Test func everyFormIsOneOperationAndEveryOperationHasAForm() {
        var forms: Set<String> = []
        for row in OperationTable.rows {
            let form = "\(row.method) \(row.scope) \(row.subresource ?? "-") \(row.copiesSource)"
            #expect(forms.insert(form).inserted, "\(form) is in the table twice")
        }
        // ListObjectsV2 is ListObjects with list-type=2: the only operation without a row of its own.
        let tabled = Set(OperationTable.rows.map(\.operation)).union([.listObjectsV2])
        #expect(tabled == Set(S3Operation.allCases))
    }

    @Test(arguments: OperationTable.rows)
    func classifiesEachRowBackToItsOperation(_ row: OperationRow) throws {
        var names = row.subresource.map { [$0] } ?? []
        if row.operation == .uploadPart || row.operation == .uploadPartCopy { names.append("partNumber") }
        let got = try OperationClassifier.classify(
            method: row.method, hasKey: row.scope == .object, queryNames: names, hasCopySource: row.copiesSource)
        #expect(got == ClassifiedOperation(operation: row.operation, action: row.action))
        if let versioned = row.versionedAction {
            let withVersion = try OperationClassifier.classify(
                method: row.method, hasKey: row.scope == .object, queryNames: names + ["versionId"],
                hasCopySource: row.copiesSource)
            #expect(withVersion.action == versioned)
        }
    }

    @Test func bucketAdministrationIsInNeitherAccessLevel() {
        let administration =
            OperationTable.bucketConfigurationRows.map(\.action) + [
                "s3:CreateBucket", "s3:DeleteBucket", "s3:PutObjectAcl", "s3:GetObjectAcl", "s3:PutObjectRetention",
                "s3:PutObjectLegalHold",
            ]
        for action in administration {
            #expect(!AccessLevel.readWrite.grants(action), "read-write grants \(action)")
        }
        #expect(Set(AccessLevel.readActions).isSubset(of: OperationTable.actions))
        #expect(Set(AccessLevel.writeActions).isSubset(of: OperationTable.actions))
    }
}
