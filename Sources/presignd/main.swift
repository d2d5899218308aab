#if canImport(Glibc)
    import Glibc
#endif

exit(PresigndCommand.main(Array(CommandLine.arguments.dropFirst())))
