/// Reading `[server]` and `[server.limits]`, including the loopback rule (DESIGN §6).
extension ServerConfig {
    static let keys = [
        "listen", "admin_listen", "workers", "allow_remote", "allowed_clients", "unix_socket_mode",
        "unix_socket_owner", "unix_socket_group", "limits", "shutdown_timeout", "log_format", "log_level",
        "access_log", "spool_directory", "max_spool_size", "max_spool_total", "admin_token_file",
        "cors_allowed_origins", "admin_socket_mode", "admin_socket_owner", "admin_socket_group", "presign_api",
        "retry_budget", "retry_body_buffer",
    ]

    static func decode(_ reader: TableReader, configPath: String) -> ServerConfig {
        var server = ServerConfig()
        let diagnostics = reader.diagnostics
        if let value = reader.boolean("allow_remote") { server.allowRemote = value }
        if let listen = reader.strings("listen", allowSingle: true) {
            if listen.isEmpty {
                diagnostics.error("'listen' needs at least one address", at: reader.keyPosition("listen"))
            }
            server.listen = listen.compactMap { decodeListen($0, key: "listen", server: server, diagnostics) }
        }
        for (index, address) in server.listen.enumerated() where server.listen[..<index].contains(address) {
            diagnostics.error("listen address \(address) is listed twice", at: reader.keyPosition("listen"))
        }
        if let admin = reader.string("admin_listen") {
            server.adminListen =
                admin.value.isEmpty ? nil : decodeListen(admin, key: "admin_listen", server: server, diagnostics)
            if let address = server.adminListen, server.listen.contains(address), !address.hasPortZero {
                diagnostics.error("admin_listen \(address) is also a listen address", at: admin.position)
            }
        }
        if let value = reader.integer("workers", in: 0...1024) { server.workers = value }
        if let clients = reader.strings("allowed_clients") {
            server.allowedClients = clients.compactMap { text in
                if let cidr = CIDR(text.value) { return cidr }
                diagnostics.error(
                    "invalid address range '\(text.value)' in allowed_clients; expected e.g. \"10.0.0.0/8\", "
                        + "\"fd00::/8\" or a single address", at: text.position)
                return nil
            }
        }
        server.unixSocketMode = socketMode("unix_socket_mode", reader) ?? server.unixSocketMode
        server.unixSocketOwner = socketAccount("unix_socket_owner", reader, lookup: SystemAccounts.userID)
        server.unixSocketGroup = socketAccount("unix_socket_group", reader, lookup: SystemAccounts.groupID)
        server.adminSocketMode = socketMode("admin_socket_mode", reader)
        server.adminSocketOwner = socketAccount("admin_socket_owner", reader, lookup: SystemAccounts.userID)
        server.adminSocketGroup = socketAccount("admin_socket_group", reader, lookup: SystemAccounts.groupID)
        if let table = reader.table("limits") {
            server.limits = Limits.decode(reader.reader(for: table, context: "[server.limits]", knownKeys: Limits.keys))
        }
        let longest = ConfigDuration.days(1)
        if let value = reader.duration("shutdown_timeout", in: .seconds(0)...longest) { server.shutdownTimeout = value }
        if let value = reader.choice("log_format", as: LogFormat.self) { server.logFormat = value }
        if let value = reader.choice("log_level", as: LogLevel.self) { server.logLevel = value }
        if let value = reader.boolean("access_log") { server.accessLog = value }
        if let value = reader.string("spool_directory") { server.spoolDirectory = value.value }
        if let value = reader.size("max_spool_size", in: 0...Int.max) { server.maxSpoolSize = value }
        if let value = reader.size("max_spool_total", in: ByteSize.mebibyte...(1 << 50)) {
            server.maxSpoolTotal = value
        }
        if let file = reader.string("admin_token_file") {
            let path = FileReader.resolve(file.value, relativeTo: configPath)
            if let problem = FileReader.readabilityProblem(path) {
                diagnostics.error("cannot read admin_token_file '\(file.value)': \(problem.reason)", at: file.position)
            }
            server.adminTokenFile = path
        }
        decodePresignAPI(reader, into: &server)
        for origin in reader.strings("cors_allowed_origins") ?? [] {
            if origin.value == "*" || (try? Endpoint.parse(origin.value).get()) != nil && !origin.value.hasSuffix("/") {
                server.corsAllowedOrigins.append(origin.value)
            } else {
                diagnostics.error(
                    "invalid origin '\(origin.value)' in cors_allowed_origins; expected \"*\" or "
                        + "\"https://host[:port]\"", at: origin.position)
            }
        }
        if let value = reader.integer("retry_budget", in: 0...1_000_000) { server.retryBudget = value }
        if let value = reader.size("retry_body_buffer", in: 0...(16 * ByteSize.mebibyte)) {
            server.retryBodyBuffer = value
        }
        reader.reportUnknownKeys()
        return server
    }

    private static func decodeListen(
        _ text: Located<String>, key: String, server: ServerConfig, _ diagnostics: Diagnostics
    ) -> ListenAddress? {
        switch ListenAddress.parse(text.value) {
        case .failure(let error):
            diagnostics.error("invalid \(key) address '\(text.value)': \(error.reason)", at: text.position)
            return nil
        case .success(let address):
            if !address.isLoopback && !server.allowRemote {
                diagnostics.error(
                    "\(key) address \(address) is not loopback; set allow_remote = true in [server] to expose "
                        + "presignd (anyone who can reach it can use its keys)", at: text.position)
            } else if !address.isLoopback {
                diagnostics.warning(
                    "\(key) address \(address) is not loopback: anyone who can reach it can use presignd's keys",
                    at: text.position)
            }
            return address
        }
    }

    /// `presign_api` and what it means with `admin_listen` and `admin_token_file` (issue 19 §6).
    private static func decodePresignAPI(_ reader: TableReader, into server: inout ServerConfig) {
        let diagnostics = reader.diagnostics
        let choice = reader.choice("presign_api", as: PresignAPIAccess.self)
        server.presignAPI = choice
        switch (choice, server.adminTokenFile) {
        case (.token?, nil):
            diagnostics.error("presign_api = \"token\" needs admin_token_file", at: reader.keyPosition("presign_api"))
        case (.open?, _?):
            diagnostics.error(
                "presign_api = \"open\" and admin_token_file contradict each other; remove one",
                at: reader.keyPosition("presign_api"))
        default:
            break
        }
        guard case .tcp? = server.adminListen else { return }
        let unixOnly = server.listen.allSatisfy { if case .unix = $0 { true } else { false } }
        switch server.presignAPIAccess {
        case .open where !server.listen.isEmpty && unixOnly:
            // A unix socket's mode and its buckets' allow lists keep local users apart; a tokenless presign API on
            // TCP lets any local user mint links for every bucket without allow lists.
            diagnostics.warning(
                "the proxy listens on unix sockets only, but presign_api = \"open\" serves the presign API over "
                    + "TCP without a token; set admin_token_file, or admin_listen = \"unix:/PATH\"",
                at: reader.keyPosition("presign_api"))
        default:
            break
        }
    }

    /// A socket mode key, or nil when absent or invalid (reported).
    private static func socketMode(_ key: String, _ reader: TableReader) -> UInt32? {
        guard let mode = reader.value(key) else { return nil }
        if let bits = parseMode(mode) { return bits }
        reader.diagnostics.error("'\(key)' must be an octal mode string such as \"0660\"", at: mode.position)
        return nil
    }

    /// A socket owner or group key: a name the system knows or a number; nil when absent or unknown (reported).
    private static func socketAccount(
        _ key: String, _ reader: TableReader, lookup: (String) -> UInt32?
    ) -> UInt32? {
        guard let text = reader.string(key) else { return nil }
        if let id = lookup(text.value) { return id }
        let kind = key.hasSuffix("group") ? "group" : "user"
        reader.diagnostics.error("'\(key)': no \(kind) named '\(text.value)' on this system", at: text.position)
        return nil
    }

    /// `"0660"` (octal string) or an integer such as `0o660`.
    private static func parseMode(_ value: TOMLValue) -> UInt32? {
        switch value.kind {
        case .string(let text) where (3...4).contains(text.count):
            guard let bits = UInt32(text, radix: 8), bits <= 0o7777 else { return nil }
            return bits
        case .integer(let bits) where (0...0o7777).contains(bits):
            return UInt32(bits)
        default:
            return nil
        }
    }
}

extension ListenAddress {
    /// `HOST:0` (any free port) may repeat: each bind gets its own port.
    var hasPortZero: Bool {
        if case .tcp(_, 0) = self { return true }
        return false
    }
}
