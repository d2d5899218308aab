#if canImport(Glibc)
    import Glibc
#endif

/// Users and groups by name or number, from the system's databases (`getpwnam_r`, `getgrnam_r`): allow lists
/// (`gid:media`) and the owners of unix sockets.
enum SystemAccounts {
    /// `"1000"` or a user name that exists; nil otherwise.
    static func userID(_ text: String) -> UInt32? {
        if let number = UInt32(text) { return number }
        guard !text.isEmpty else { return nil }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>? = nil
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwnam_r(text, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return UInt32(entry.pw_uid)
    }

    /// `"100"` or a group name that exists; nil otherwise.
    static func groupID(_ text: String) -> UInt32? {
        if let number = UInt32(text) { return number }
        guard !text.isEmpty else { return nil }
        var entry = group()
        var result: UnsafeMutablePointer<group>? = nil
        var buffer = [CChar](repeating: 0, count: 16384)
        let status = getgrnam_r(text, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return UInt32(entry.gr_gid)
    }
}
