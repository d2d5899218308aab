import PresigndConfig
import Testing

/// A minimal valid upstream + bucket, appended to snippets that test something else.
let minimalUpstream = """
    [upstream.r2]
    provider = "r2"
    account_id = "5f3a7c9e1b2d4f6a8c0e2b4d6f8a0c1e"
    access_key_id = "AKIDEXAMPLE"
    secret_access_key = "wJalrXUtnFEMI"

    [[bucket]]
    name = "photos"
    upstream = "r2"
    """

/// Loads `text` as `test.toml`.
func load(_ text: String, environment: [String: String] = [:]) -> Result<Configuration, ConfigErrors> {
    ConfigLoader.parse(text: text, path: "test.toml", environment: environment)
}

/// The errors of a configuration expected not to load (empty if it loaded).
func errors(_ text: String, environment: [String: String] = [:]) -> [ConfigError] {
    if case .failure(let errors) = load(text, environment: environment) { return errors.errors }
    return []
}

/// `LINE:COL: MESSAGE` for each error, for compact expectations.
func described(_ errors: [ConfigError]) -> [String] {
    errors.map { "\($0.line):\($0.column): \($0.message)" }
}

/// A configuration expected to load; records an issue and returns nil otherwise.
func loaded(
    _ text: String, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
) -> Configuration? {
    switch load(text, environment: environment) {
    case .success(let configuration):
        return configuration
    case .failure(let errors):
        Issue.record("expected the configuration to load:\n\(errors)", sourceLocation: sourceLocation)
        return nil
    }
}
