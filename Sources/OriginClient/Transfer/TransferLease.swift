/// Keeps a transfer alive while its body can still be read, and cancels it when the last holder lets go.
///
/// ``OriginBody`` and its iterator hold the lease; dropping an unread response releases
/// the transfer's curl handle and connection instead of leaving it paused forever.
final class TransferLease: Sendable {
    let transfer: Transfer

    init(_ transfer: Transfer) {
        self.transfer = transfer
    }

    deinit {
        transfer.cancel()
    }
}
