/// A decimal number in an HTTP header (`Range`, `Content-Range`), read with checked arithmetic.
enum HeaderNumber: Equatable {
    /// No digits at all.
    case empty
    /// Digits that fit in `Int64`.
    case value(Int64)
    /// Digits past `Int64.max`.
    case tooLarge
    /// Anything that is not digits.
    case invalid

    /// Reads `bytes[range]`.
    init(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        guard !range.isEmpty else {
            self = .empty
            return
        }
        var value: Int64 = 0
        var tooLarge = false
        for index in range {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                self = .invalid
                return
            }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { tooLarge = true } else { value = sum }
        }
        self = tooLarge ? .tooLarge : .value(value)
    }

    /// The value when it fits, else `nil`.
    var value: Int64? {
        if case .value(let value) = self { return value }
        return nil
    }
}
