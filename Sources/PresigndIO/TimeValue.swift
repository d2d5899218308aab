#if canImport(Glibc)
    import Glibc
#endif

/// `timeval` from milliseconds (negative counts as 0).
package func timeValue(milliseconds: Int) -> timeval {
    let milliseconds = max(0, milliseconds)
    return timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
}
