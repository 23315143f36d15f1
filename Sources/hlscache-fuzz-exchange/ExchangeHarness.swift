import Foundation
import FuzzDriver
import HLSCacheServer
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// `hlscache-fuzz-exchange`: the server's request path, which the parsers' fuzzer (`hlscache-fuzz`) leaves out so
/// that it needs no server. See ``FuzzDriver``.
@main
struct ExchangeFuzzMain {
    static func main() {
        // Made before the first input, not during it: LeakSanitizer cannot follow every pointer Swift keeps in an
        // enum's spare bits (a fleet read-ahead's, in the probes' components), and libFuzzer checks for leaks what
        // an input allocates.
        _ = probes
        FuzzDriver.main(ExchangeHarness.self, program: "hlscache-fuzz-exchange")
    }
}

/// The harness of the server's request path.
enum ExchangeHarness: String, FuzzHarness {
    /// A request head (the scanner's, or, for what the scanner does not read, each head the HTTP/1 decoder reads, as
    /// the front takes them) through the rest of the request path up to the answer's plan (``RequestPathProbe``: the
    /// resolution with its address verdict, range and key, the route, the object head, the preflight, the answer's
    /// head bytes, the access record), in forward and reverse mode.
    case exchange

    func run(_ input: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(input)
        if probes[0].plan(bytes) != nil {
            _ = probes[1].plan(bytes)
            return
        }
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
        var heads = 0
        while heads < 8, let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            guard case .head(let head) = part else { continue }
            heads += 1
            for probe in probes { _ = probe.plan(decoded: head) }
        }
        _ = try? channel.finish()
    }
}

/// The request path's probes, forward and reverse mode, on a cache directory of their own.
private let probes: [RequestPathProbe] = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-fuzz-\(getpid())").path
    do {
        return [
            try RequestPathProbe(cacheDirectory: directory + "/forward"),
            try RequestPathProbe(cacheDirectory: directory + "/reverse", reverseOrigin: "https://origin.example/b"),
        ]
    } catch {
        fatalError("cannot make the request path's probes: \(error)")
    }
}()
