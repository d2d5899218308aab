import CLibevent
import COpenSSL

public enum Proxy {
    public static func libraryVersions() -> String {
        "libevent \(String(cString: event_get_version())), \(String(cString: OpenSSL_version(0)))"
    }
}
