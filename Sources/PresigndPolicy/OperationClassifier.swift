/// An operation with the IAM action this request form needs.
public struct ClassifiedOperation: Equatable, Sendable {
    public var operation: S3Operation
    public var action: String

    public init(operation: S3Operation, action: String) {
        self.operation = operation
        self.action = action
    }
}

/// Method + bucket or object + query subresources + the headers that change meaning → one S3 operation
/// (`OperationTable`). Pure. A form the table does not hold, an unknown query parameter or two subresources
/// at once is denied: deny by default where meaning is unclear.
public enum OperationClassifier {
    public static func classify(
        method: String, hasKey: Bool, queryNames: [String], listType: String? = nil,
        hasCopySource: Bool = false, hasCopySourceRange: Bool = false
    ) throws(PolicyDenial) -> ClassifiedOperation {
        var subresource: String? = nil
        var isVersioned = false
        var hasPartNumber = false
        for name in queryNames {
            if OperationTable.subresources.contains(name) {
                if let other = subresource, other != name {
                    throw PolicyDenial(
                        .unknownOperation, rule: "classifier",
                        "a request with both ?\(other) and ?\(name) is not one S3 operation")
                }
                subresource = name
            } else if OperationTable.plainParameters.contains(name) {
                if name == "versionId" { isVersioned = true }
                if name == "partNumber" { hasPartNumber = true }
            } else {
                throw PolicyDenial(
                    .unknownSubresource, rule: "classifier",
                    "query parameter '\(name)' is not one presignd knows (unknown subresources are denied)")
            }
        }
        let scope: OperationRow.Scope = hasKey ? .object : .bucket
        guard
            let row = OperationTable.rows.first(where: {
                $0.method == method && $0.scope == scope && $0.subresource == subresource
                    && $0.copiesSource == hasCopySource
            })
        else {
            var form = "\(method) on \(hasKey ? "an object" : "a bucket")"
            if let subresource { form += " with ?\(subresource)" }
            if hasCopySource { form += " with x-amz-copy-source" }
            throw PolicyDenial(.unknownOperation, rule: "classifier", form + " is not an S3 operation presignd knows")
        }
        var operation = row.operation
        if operation == .listObjects && listType == "2" { operation = .listObjectsV2 }
        // UploadPart needs its part number; on a plain PUT a partNumber means the client meant something else.
        let isPart = operation == .uploadPart || operation == .uploadPartCopy
        if isPart != hasPartNumber && (method == "PUT") {
            throw PolicyDenial(
                .unknownOperation, rule: "classifier",
                isPart ? "UploadPart needs a partNumber" : "partNumber without uploadId on PUT is not an S3 operation")
        }
        if hasCopySourceRange && operation != .uploadPartCopy {
            throw PolicyDenial(
                .unknownOperation, rule: "classifier", "x-amz-copy-source-range applies to UploadPartCopy only")
        }
        let action = isVersioned ? row.versionedAction ?? row.action : row.action
        return ClassifiedOperation(operation: operation, action: action)
    }
}
