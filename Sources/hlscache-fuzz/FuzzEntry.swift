import Foundation

/// `hlscache-fuzz`: with `-DHLSCACHE_FUZZ -sanitize=fuzzer,address` (bench/fuzz.sh), libFuzzer's driver runs the
/// harness named by `HLSCACHE_FUZZ_TARGET` over generated inputs. Otherwise it is a plain program that runs a
/// harness over the files it is given (a corpus, or a crash to reproduce): `hlscache-fuzz playlist FILE...`.
@main
struct FuzzMain {
    static func main() {
        #if HLSCACHE_FUZZ
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: hlscache-fuzz \(names) FILE...\n".utf8))
            exit(64)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            [UInt8](data).withUnsafeBufferPointer { target.run($0) }
        }
        #endif
    }
}

#if HLSCACHE_FUZZ
/// libFuzzer's driver (`-sanitize=fuzzer` links it; SwiftPM's executable already has its own `main`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// One input to the selected harness.
private func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.selected.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}
#endif
