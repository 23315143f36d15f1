extension Duration {
    /// Whole milliseconds, rounded up, at least 1.
    var roundedUpMilliseconds: Int {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(max(1, min(milliseconds, Int64(Int32.max))))
    }
}
