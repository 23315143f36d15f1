import Logging
import ServiceLifecycle
import UnixSignals

/// Loads the TLS pair again on `SIGHUP` (what an ACME client's renewal hook sends) and when either file changed,
/// checked every ``checkInterval`` (``TLSCertificates/reload(force:logger:now:)``).
struct TLSReloadService: Service {
    let certificates: TLSCertificates
    let logger: Logger
    /// How often the files are looked at.
    var checkInterval: Duration = .seconds(60)

    func run() async throws {
        let certificates = certificates
        let logger = logger
        let interval = checkInterval
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup) {
                    certificates.reload(force: true, logger: logger)
                }
            }
            group.addTask {
                while (try? await Task.sleep(for: interval)) != nil {
                    certificates.reload(force: false, logger: logger)
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }
}
