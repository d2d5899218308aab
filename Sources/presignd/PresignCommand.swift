/// Placeholder until implemented.
enum PresignCommand {
    static func main(_ arguments: [String]) -> Int32 {
        Console.err("presignd: not implemented yet")
        return ExitCode.software
    }
}
