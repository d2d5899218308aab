import PresigndConfig
import PresigndProxy
import PresigndSigV4

/// `presignd mint`: R2 temporary credentials minted locally from the bucket's upstream keys (issue 22 §3),
/// scoped no wider than the bucket's policy in the configuration. Printing the secret is the command's purpose.
enum MintCommand {
    static let usage = """
        Usage: presignd mint --config PATH --bucket B --permission P [--prefix P]... [--object K]... [--ttl T]
                             [--json | --env | --aws-config [--profile NAME]]

        Prints R2 temporary credentials (access key id, secret access key, session token) derived locally from the
        bucket's R2 upstream keys, as Cloudflare documents "Generate locally (client-side signing)". No API call.

          --config PATH      the configuration; the bucket must be on a provider = "r2" upstream
          --bucket B         a configured bucket
          --permission P     object-read-only, object-read-write, admin-read-only or admin-read-write; never wider
                             than the bucket's access and allowed_methods (admin-* also needs no allowed_prefixes)
          --prefix P         limit to keys starting with P (repeatable); inside the bucket's allowed_prefixes
          --object K         limit to the exact key K (repeatable); inside the bucket's allowed_prefixes
          --ttl T            lifetime: seconds, or 30s / 15m / 1h / 7d; at most 7 days (default 15m)
          --json             AWS credential_process JSON (Version 1, with Expiration), usable as a
                             credential_process in ~/.aws/config
          --env              AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN / AWS_ENDPOINT_URL
                             lines for the shell (eval) or an env file
          --aws-config       a shared-credentials-file profile (aws configure, the SDKs, rclone env_auth)
          --profile NAME     the profile name for --aws-config (default: the bucket name)

        Exit status: 0 minted, 64 usage error or a scope the bucket's policy refuses, 78 configuration error.
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let options = PresigndCommand.parse(
                arguments, usage: usage,
                valued: ["config", "bucket", "permission", "prefix", "object", "ttl", "profile"],
                flags: ["json", "env", "aws-config"], exitCode: &exitCode)
        else { return exitCode }
        do {
            Console.out(try run(options, environment: processEnvironment(), now: AmzDate.now().epochSeconds))
            return ExitCode.ok
        } catch let error as UsageError {
            Console.err("presignd mint: \(error.message)\n\n\(usage)")
            return ExitCode.usage
        } catch let failure as PresignFailure {
            Console.err("presignd mint: refused: \(optionName(failure.field)): \(failure.message)")
            return ExitCode.usage
        } catch let failure as ConfigFailure {
            SigningTargets.report(failure, command: "mint")
            return ExitCode.config
        } catch {
            Console.err("presignd mint: \(error)")
            return ExitCode.software
        }
    }

    /// The credentials in the chosen format.
    static func run(_ options: Arguments, environment: [String: String], now: Int) throws -> String {
        guard options.positionals.isEmpty else {
            throw UsageError(message: "unexpected argument '\(options.positionals[0])'")
        }
        let formats = ["json", "env", "aws-config"].filter { options.has($0) }
        guard formats.count <= 1 else { throw UsageError(message: "give one of --json, --env, --aws-config") }
        if options.value("profile") != nil && formats != ["aws-config"] {
            throw UsageError(message: "--profile goes with --aws-config")
        }
        guard let path = options.value("config") else { throw UsageError(message: "--config PATH is required") }
        guard let bucket = options.value("bucket") else { throw UsageError(message: "--bucket is required") }
        guard let permissionText = options.value("permission") else {
            throw UsageError(message: "--permission is required")
        }
        guard let permission = R2Permission(rawValue: permissionText) else {
            let names = R2Permission.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(message: "--permission must be one of \(names), got '\(permissionText)'")
        }
        let ttl = try PresignCommand.parseSeconds(
            options.value("ttl") ?? "15m", option: "--ttl", maximum: R2CredentialRequest.maximumTTL)
        var request = R2CredentialRequest(bucket: bucket, permission: permission, ttlSeconds: ttl)
        request.prefixes = options.values("prefix")
        request.objects = options.values("object")

        let configuration: Configuration
        switch ConfigLoader.load(path: path, environment: environment) {
        case .failure(let errors): throw ConfigFailure(errors: errors)
        case .success(let loaded): configuration = loaded
        }
        let minted = try R2CredentialPolicy.mint(request, configuration: configuration, now: now).get()
        switch formats.first {
        case "json"?: return json(minted)
        case "env"?: return env(minted)
        case "aws-config"?: return awsConfig(minted, profile: options.value("profile") ?? bucket)
        default: return text(minted)
        }
    }

    /// AWS CLI `credential_process` output, version 1.
    static func json(_ minted: R2TemporaryCredentials) -> String { minted.processJSON }

    /// The AWS SDKs' environment; values are hex, base64 and a URL, safe unquoted.
    static func env(_ minted: R2TemporaryCredentials) -> String {
        """
        # R2 temporary credentials, expire \(AmzDate(epochSeconds: minted.expiresAt).iso8601)
        export AWS_ACCESS_KEY_ID=\(minted.accessKeyID)
        export AWS_SECRET_ACCESS_KEY=\(minted.secretAccessKey.exposedValue)
        export AWS_SESSION_TOKEN=\(minted.sessionToken.exposedValue)
        export AWS_ENDPOINT_URL=\(minted.endpoint)
        export AWS_REGION=auto
        """
    }

    /// A profile for `~/.aws/credentials` (the shared credentials file).
    static func awsConfig(_ minted: R2TemporaryCredentials, profile: String) -> String {
        """
        # R2 temporary credentials, expire \(AmzDate(epochSeconds: minted.expiresAt).iso8601); endpoint \(minted.endpoint)
        [\(profile)]
        aws_access_key_id = \(minted.accessKeyID)
        aws_secret_access_key = \(minted.secretAccessKey.exposedValue)
        aws_session_token = \(minted.sessionToken.exposedValue)
        """
    }

    static func text(_ minted: R2TemporaryCredentials) -> String {
        """
        access_key_id: \(minted.accessKeyID)
        secret_access_key: \(minted.secretAccessKey.exposedValue)
        session_token: \(minted.sessionToken.exposedValue)
        endpoint: \(minted.endpoint)
        expires: \(AmzDate(epochSeconds: minted.expiresAt).iso8601)
        """
    }

    /// The request field a refusal names, as the option typed.
    static func optionName(_ field: String) -> String {
        switch field {
        case "prefixes": "--prefix"
        case "objects": "--object"
        default: "--" + field
        }
    }
}
