import CCurl

/// Process-wide libcurl setup, done once before the first handle is created.
enum CurlGlobal {
    /// The oldest libcurl with every option the client sets (`CURLOPT_PROTOCOLS_STR` came in 7.85.0).
    static let minimumVersion: UInt32 = 0x07_55_00

    /// The result of `curl_global_init`, run once (Swift initializes globals exactly once, thread-safely).
    private static let initResult: CURLcode = curl_global_init(hlscache_CURL_GLOBAL_DEFAULT)

    /// The libcurl version in use, as `0xXXYYZZ`.
    static var versionNumber: UInt32 {
        hlscache_curl_version_num()
    }

    /// Initializes libcurl and checks its version.
    static func initialize() throws(OriginError) {
        guard initResult == CURLE_OK else {
            throw .invalidConfiguration(
                reason: "libcurl failed to initialize (\(String(cString: curl_easy_strerror(initResult))))")
        }
        guard versionNumber >= minimumVersion else {
            throw .invalidConfiguration(reason: "libcurl 7.85.0 or later is required")
        }
    }
}
