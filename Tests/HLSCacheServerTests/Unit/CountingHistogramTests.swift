import HLSCacheTestTraits
import Testing

@testable import HLSCacheServer

/// The lock-free histogram the CMCD metrics use: Prometheus' text format, buckets cumulative.
@Suite("Counting histogram", .sharedMachine)
struct CountingHistogramTests {
    @Test("observations land in the first bucket whose bound holds them; the text is Prometheus' histogram")
    func rendersCumulativeBuckets() {
        let histogram = CountingHistogram(name: "hlscache_test_ms", help: "A test", bounds: [10, 100])
        for value: Int64 in [0, 10, 11, 100, 5000, -1] { histogram.record(value) }
        var output: [UInt8] = []
        histogram.render(into: &output)
        #expect(
            String(decoding: output, as: UTF8.self) == """
                # HELP hlscache_test_ms A test
                # TYPE hlscache_test_ms histogram
                hlscache_test_ms_bucket{le="10.0"} 2
                hlscache_test_ms_bucket{le="100.0"} 4
                hlscache_test_ms_bucket{le="+Inf"} 5
                hlscache_test_ms_sum 5121.0
                hlscache_test_ms_count 5

                """)
        #expect(histogram.count == 5)
    }
}
