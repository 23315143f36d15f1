import Foundation

/// A fuzzer's harnesses, by name: each feeds one input to a parser that takes hostile bytes.
public protocol FuzzHarness: CaseIterable, RawRepresentable<String> {
    /// Runs the harness on one input.
    func run(_ input: UnsafeBufferPointer<UInt8>)
}

/// The one entry point of the fuzzing executables (`hlscache-fuzz`, the parsers; `hlscache-fuzz-exchange`, the server's
/// request path). With `-DHLSCACHE_FUZZ -sanitize=fuzzer,address` (bench/fuzz.sh), libFuzzer's driver runs the harness
/// named by `HLSCACHE_FUZZ_TARGET` over generated inputs. Otherwise the program runs a harness over the files it is
/// given (a corpus, or a crash to reproduce): `hlscache-fuzz playlist FILE...`.
public enum FuzzDriver {
    /// Runs the fuzzer, or the named harness over files, and exits.
    /// - Parameters:
    ///   - harnesses: the program's harnesses.
    ///   - program: the program's name, for its usage line.
    public static func main<Harness: FuzzHarness>(_ harnesses: Harness.Type, program: String) -> Never {
        #if HLSCACHE_FUZZ
        let name = ProcessInfo.processInfo.environment["HLSCACHE_FUZZ_TARGET"] ?? ""
        guard let harness = Harness(rawValue: name) else {
            fatalError("HLSCACHE_FUZZ_TARGET must name one of \(names(harnesses)), not \(name)")
        }
        selected = { harness.run($0) }
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let harness = Harness(rawValue: name) else {
            FileHandle.standardError.write(Data("usage: \(program) \(names(harnesses)) FILE...\n".utf8))
            exit(64)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            [UInt8](data).withUnsafeBufferPointer { harness.run($0) }
        }
        exit(0)
        #endif
    }

    private static func names<Harness: FuzzHarness>(_ harnesses: Harness.Type) -> String {
        harnesses.allCases.map(\.rawValue).joined(separator: "|")
    }
}

#if HLSCACHE_FUZZ
/// The harness libFuzzer's callback runs: set once, before the driver starts, and only read after.
nonisolated(unsafe) private var selected: (UnsafeBufferPointer<UInt8>) -> Void = { _ in }

/// libFuzzer's driver (`-sanitize=fuzzer` links it; SwiftPM's executable already has its own `main`).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// One input to the selected harness.
private func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected(UnsafeBufferPointer(start: data, count: size))
    return 0
}
#endif
