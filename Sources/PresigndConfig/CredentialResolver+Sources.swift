#if canImport(Glibc)
    import Glibc
#endif
import PresigndSigV4

/// The individual credential sources: table keys and `*_file` keys, a shared credentials profile, the environment.
extension CredentialResolver {
    /// `key` inline or `key_file`: both is an error; a file is read and its trailing newline trimmed.
    func part(_ key: String) -> Part {
        let inline = reader.string(key)
        let path = reader.string(key + "_file")
        if reader.contains(key) && reader.contains(key + "_file") {
            reader.diagnostics.error(
                "set either \(key) or \(key)_file, not both", at: reader.keyPosition(key + "_file"))
            return .failed
        }
        if let inline {
            guard !inline.value.isEmpty else {
                reader.diagnostics.error("\(key) is empty", at: inline.position)
                return .failed
            }
            return .value(inline.value, fromFile: false)
        }
        guard let path else { return reader.contains(key) || reader.contains(key + "_file") ? .failed : .absent }
        let resolved = FileReader.resolve(path.value, relativeTo: configPath)
        switch FileReader.read(resolved, limit: 64 * ByteSize.kibibyte) {
        case .failure(let error):
            reader.diagnostics.error(
                "cannot read \(key)_file '\(path.value)': \(error.reason)" + Self.hint(resolved, error),
                at: reader.keyPosition(key + "_file"))
            return .failed
        case .success(var contents):
            while contents.hasSuffix("\n") || contents.hasSuffix("\r\n") { contents.removeLast() }
            guard !contents.isEmpty else {
                reader.diagnostics.error("\(key)_file '\(path.value)' is empty", at: reader.keyPosition(key + "_file"))
                return .failed
            }
            return .value(contents, fromFile: true)
        }
    }

    /// `credentials_profile` from `credentials_file`, `$AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`.
    func resolveProfile(_ profile: Located<String>, file: Located<String>?) -> UpstreamCredentials? {
        let diagnostics = reader.diagnostics
        let errorPosition = file.map { _ in reader.keyPosition("credentials_file") } ?? profile.position
        guard
            let path = file.map({ FileReader.resolve($0.value, relativeTo: configPath) })
                ?? SharedCredentialsFile.defaultPath(environment: environment)
        else {
            diagnostics.error(
                "cannot locate the credentials file for profile '\(profile.value)': set credentials_file, or "
                    + "HOME or AWS_SHARED_CREDENTIALS_FILE in the environment", at: profile.position)
            return nil
        }
        let text: String
        switch FileReader.read(path, limit: ByteSize.mebibyte) {
        case .failure(let error):
            diagnostics.error("cannot read credentials file '\(path)': \(error.reason)", at: errorPosition)
            return nil
        case .success(let contents):
            text = contents
        }
        guard let keys = SharedCredentialsFile(text: text).profiles[profile.value] else {
            diagnostics.error("profile '\(profile.value)' not found in '\(path)'", at: profile.position)
            return nil
        }
        guard let id = keys["aws_access_key_id"], !id.isEmpty, let secret = keys["aws_secret_access_key"],
            !secret.isEmpty
        else {
            diagnostics.error(
                "profile '\(profile.value)' in '\(path)' needs aws_access_key_id and aws_secret_access_key",
                at: profile.position)
            return nil
        }
        let token = keys["aws_session_token"].flatMap { $0.isEmpty ? nil : Secret($0) }
        return UpstreamCredentials(
            accessKeyID: id, secretAccessKey: Secret(secret), sessionToken: token,
            source: "profile \(profile.value)")
    }

    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and optional `AWS_SESSION_TOKEN`.
    func resolveEnvironment() -> UpstreamCredentials? {
        let id = environment["AWS_ACCESS_KEY_ID"].flatMap { $0.isEmpty ? nil : $0 }
        let secret = environment["AWS_SECRET_ACCESS_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        guard let id, let secret else {
            let environmentState =
                if id != nil { "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not" } else if secret != nil {
                    "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
                } else { "neither is set" }
            reader.diagnostics.error(
                "no credentials for upstream '\(upstreamName)'. Tried, in order: access_key_id and secret_access_key "
                    + "(or access_key_id_file and secret_access_key_file) in [upstream.\(upstreamName)]: not set; "
                    + "credentials_profile: not set; AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in presignd's "
                    + "environment: \(environmentState). Set one of them, e.g. access_key_id = \"…\" and "
                    + "secret_access_key_file = \"/etc/presignd/credentials/secret_access_key\" (sudo and systemd "
                    + "do not pass on your shell's environment)", at: reader.table.position)
            return nil
        }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : Secret($0) }
        return UpstreamCredentials(
            accessKeyID: id, secretAccessKey: Secret(secret), sessionToken: token, source: "environment")
    }

    /// Where a key file that cannot be read was meant to come from, for the paths systemd and Docker fill.
    static func hint(_ path: String, _ error: FileReadError) -> String {
        if path.hasPrefix("/run/credentials/") && error.code == ENOENT {
            let name = path.split(separator: "/").last.map(String.init) ?? "NAME"
            return " (systemd creates this file from the unit's LoadCredential= only while the service runs, so "
                + "check-config outside the unit cannot read it; presignd.service loads it from "
                + "/etc/presignd/credentials/\(name): put the key there and run systemctl start presignd, whose "
                + "ExecStartPre runs check-config)"
        }
        if path.hasPrefix("/run/secrets/") && error.code == ENOENT {
            return " (Docker mounts a secret here only inside the container, and only one listed under the service's "
                + "secrets:)"
        }
        if error.code == EACCES {
            return " (the user presignd runs as must be able to read it; Docker secrets: mode 0444 on the host file)"
        }
        return ""
    }
}
