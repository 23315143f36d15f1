import Synchronization

/// One worker's gauges (the client sums its workers'), updated without locks.
final class ClientCounters: Sendable {
    /// Body bytes received from origins and not yet handed to a reader, over the worker's transfers.
    let bufferedBytes = Atomic<Int>(0)
    /// Transfers that hold a curl handle.
    let activeTransfers = Atomic<Int>(0)
    /// Transfers queued for the worker or holding a curl handle: what picks the least busy worker, counted from
    /// the moment a transfer is queued (``activeTransfers`` lags until the worker thread has woken).
    let submittedTransfers = Atomic<Int>(0)
}
