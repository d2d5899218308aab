/// Why the policy refused a request: the reason (a bounded metric label), the rule that decided it (as
/// `presignd explain` and the log print it) and a message for the client.
public struct PolicyDenial: Error, Equatable, Sendable {
    /// Bounded: the `reason` label of `presignd_denied_total`.
    public enum Reason: String, Sendable, CaseIterable {
        case unknownOperation = "unknown_operation"
        case unknownSubresource = "unknown_subresource"
        case action = "action"
        case deniedAction = "denied_action"
        case allowedMethods = "allowed_methods"
        case prefix = "prefix"
        case copySource = "copy_source"
        case principal = "principal"
        case aclHeader = "acl_header"
        case headerAction = "header_action"
        case dotSegment = "dot_segment"
        case methodOverride = "method_override"
        case legacyAuthentication = "sigv2_query"
        case headerInQuery = "header_in_query"
        case malformedDeleteBody = "malformed_delete_body"
    }

    public var reason: Reason
    /// The rule, as written in the configuration where there is one (`access = "read-only"`,
    /// `denied_actions "s3:Delete*"`, `allowed_prefixes`), else the built-in rule's name.
    public var rule: String
    public var message: String

    public init(_ reason: Reason, rule: String, _ message: String) {
        self.reason = reason
        self.rule = rule
        self.message = message
    }

    /// Malformed requests (400) rather than forbidden ones (403).
    public var isMalformed: Bool {
        switch reason {
        case .dotSegment, .methodOverride, .legacyAuthentication, .headerInQuery, .malformedDeleteBody: true
        default: false
        }
    }
}
