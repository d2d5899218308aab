/// Placeholder until implemented.
enum CheckConfigCommand {
    static func main(_ arguments: [String]) -> Int32 {
        Console.err("presignd: not implemented yet")
        return ExitCode.software
    }
}
