import PresigndConfig
import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4

/// What the policy makes of one request, as `presignd explain` prints it (issue 19 §7). Built by the same
/// code the proxy runs (`RequestRewriter.rewrite`, then the DeleteObjects body check), so it cannot drift.
struct PolicyExplanation: Equatable {
    var bucket: String?
    /// An `S3Operation` name, or "unknown".
    var operation: String
    var action: String?
    /// The keys the request touches: the path key, a DeleteObjects body's keys, a listing's prefixes.
    var keys: [String]
    var principal: String
    var isAllowed: Bool
    var status: Int
    /// The S3 error code of a refusal.
    var code: String?
    var rule: String
    var message: String?

    /// `head` as a client would send it, with `body` when there is one.
    init(head: RequestHead, body: [UInt8]?, principal: Principal, settings: ProxySettings) {
        self.principal = principal.description
        operation = "unknown"
        keys = []
        isAllowed = false
        status = 200
        rule = "-"
        let target = (try? RequestRewriter.originForm(of: head).get()) ?? head.target[...]
        let (rawPath, rawQuery) = RequestRewriter.splitTarget(target)
        if let path = try? URIEncoding.decodePath(rawPath.utf8, plusIsSpace: false),
            case .bucket(let index, _, let key) = settings.router.route(decodedPath: path)
        {
            bucket = settings.router.routes[index].name
            if !key.isEmpty { keys.append(String(decoding: key, as: UTF8.self)) }
        }
        if let query = try? URIEncoding.parseQuery(rawQuery: rawQuery.utf8) {
            keys += query.filter { $0.name == "prefix" }.map { "prefix:" + $0.value }
        }
        if let source = head.headers["x-amz-copy-source"] { keys.append("copy-source:" + source) }
        let framing: BodyFraming = body.map { .contentLength($0.count) } ?? .none
        do throws(ProxyError) {
            switch try RequestRewriter.rewrite(head: head, framing: framing, settings: settings, principal: principal) {
            case .serviceRoot:
                operation = "ListBuckets"
                rule = "service root"
            case .redirect:
                operation = head.method == "HEAD" ? S3Operation.headObject.rawValue : S3Operation.getObject.rawValue
                rule = "redirect"
            case .forward(let plan):
                operation = plan.verdict.operation.rawValue
                action = plan.verdict.action
                rule = plan.verdict.rule
                if let policy = plan.deleteKeysPolicy, let body {
                    _ = try RequestRewriter.checkDeleteBody(body, policy: policy)
                }
            }
            isAllowed = true
        } catch {
            (status, code) = error.statusAndCode
            message = error.message
            if case .policyDenied(let denial, let operation) = error {
                self.operation = operation
                rule = denial.rule
            } else {
                rule = "request"
            }
        }
        if operation == S3Operation.deleteObjects.rawValue, let body, let deleted = try? DeleteObjectsBody.keys(body) {
            keys += deleted
        }
    }

    /// The lines `presignd explain` prints.
    var lines: [String] {
        var out = [
            "operation: \(operation)" + (action.map { " (\($0))" } ?? ""),
            "bucket:    \(bucket ?? "-")",
        ]
        out += keys.isEmpty ? ["keys:      -"] : keys.map { "key:       \($0)" }
        out += [
            "principal: \(principal)",
            "decision:  " + (isAllowed ? "allow" : "deny \(status) \(code ?? "")"),
            "rule:      \(rule)",
        ]
        if let message { out.append("message:   \(message)") }
        return out
    }
}

/// `presignd explain`'s entry point: the configuration mapped as the daemon maps it, then one request judged.
public enum PolicyExplainer {
    /// The printed lines and whether the request would be forwarded. `target` is a path (`/bucket/key?query`)
    /// or an `http(s)://` URL whose authority becomes the `Host` header.
    public static func explain(
        configuration: Configuration, principal: Principal, method: String, target: String,
        headers: [(String, String)], body: [UInt8]?
    ) throws(StartupError) -> (lines: [String], isAllowed: Bool) {
        let settings = try DaemonPlan(configuration: configuration).settings
        var fields = HTTPHeaders()
        var path = target
        for scheme in ["http://", "https://"] where target.hasPrefix(scheme) {
            let rest = target.dropFirst(scheme.count)
            let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            fields.add(name: "Host", value: String(rest[..<slash]))
            path = rest[slash...].hasPrefix("/") ? String(rest[slash...]) : "/" + rest[slash...]
        }
        if fields["host"] == nil && !headers.contains(where: { ASCII.equalsLowercase($0.0, "host") }) {
            fields.add(name: "Host", value: "localhost")
        }
        for (name, value) in headers { fields.add(name: name, value: value) }
        let head = RequestHead(method: method, target: path, headers: fields)
        let explanation = PolicyExplanation(head: head, body: body, principal: principal, settings: settings)
        return (explanation.lines, explanation.isAllowed)
    }
}
