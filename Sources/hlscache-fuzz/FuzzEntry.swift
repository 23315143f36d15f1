import FuzzDriver

/// `hlscache-fuzz`: the parsers' harnesses (``FuzzTarget``), with no server in the program. See ``FuzzDriver``.
@main
struct FuzzMain {
    static func main() {
        FuzzDriver.main(FuzzTarget.self, program: "hlscache-fuzz")
    }
}
