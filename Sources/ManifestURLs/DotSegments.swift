/// RFC 3986 section 5.2.3 path merging and section 5.2.4 dot-segment removal, on bytes.
enum DotSegments {
    /// Appends `path` with its dot segments removed.
    static func append(_ bytes: UnsafeBufferPointer<UInt8>, _ path: Range<Int>, to output: inout ByteWriter) {
        if hasDotSegment(bytes, path) {
            removeDotSegments(Array(bytes[path]), to: &output)
        } else {
            output.append(bytes, path)
        }
    }

    /// Appends the merge of the base path's directory and a relative path, dot segments removed.
    static func appendMerged(
        base: UnsafeBufferPointer<UInt8>, directory basePath: Range<Int>, hasAuthority: Bool, baseHasDotSegment: Bool,
        reference: UnsafeBufferPointer<UInt8>, _ path: Range<Int>, to output: inout ByteWriter
    ) {
        let baseDirectory = basePath
        let needsSlash = hasAuthority && basePath.isEmpty
        if !baseHasDotSegment && !hasDotSegment(reference, path) {
            if needsSlash { output.append(ASCII.slash) }
            output.append(base, baseDirectory)
            output.append(reference, path)
            return
        }
        var merged: [UInt8] = needsSlash ? [ASCII.slash] : []
        merged.append(contentsOf: base[baseDirectory])
        merged.append(contentsOf: reference[path])
        removeDotSegments(merged, to: &output)
    }

    /// Whether some segment of the path is `.` or `..`.
    @inline(__always)
    static func hasDotSegment(_ bytes: UnsafeBufferPointer<UInt8>, _ path: Range<Int>) -> Bool {
        var index = bytes.index(of: ASCII.dot, in: path)
        let end = path.upperBound
        while index < end {
            if index == path.lowerBound || bytes[index - 1] == ASCII.slash {
                let next = index + 1
                if next == end || bytes[next] == ASCII.slash { return true }
                if bytes[next] == ASCII.dot, next + 1 == end || bytes[next + 1] == ASCII.slash { return true }
            }
            index = bytes.index(of: ASCII.dot, in: (index + 1)..<end)
        }
        return false
    }

    /// The algorithm of RFC 3986 section 5.2.4, appending the result to `output`.
    static func removeDotSegments(_ input: [UInt8], to output: inout ByteWriter) {
        let floor = output.count
        var index = 0
        let end = input.count
        func matches(_ text: StaticString) -> Bool {
            let length = text.utf8CodeUnitCount
            guard index + length <= end else { return false }
            for offset in 0..<length where input[index + offset] != text.utf8Start[offset] { return false }
            return true
        }
        func popSegment() {
            var cut = output.count
            while cut > floor, output[cut - 1] != ASCII.slash { cut -= 1 }
            if cut > floor { cut -= 1 }
            output.truncate(to: cut)
        }
        while index < end {
            let remaining = end - index
            if matches("../") {
                index += 3
            } else if matches("./") {
                index += 2
            } else if matches("/./") {
                index += 2
            } else if remaining == 2, matches("/.") {
                output.append(ASCII.slash)
                index = end
            } else if matches("/../") {
                index += 3
                popSegment()
            } else if remaining == 3, matches("/..") {
                popSegment()
                output.append(ASCII.slash)
                index = end
            } else if (remaining == 1 && input[index] == ASCII.dot) || (remaining == 2 && matches("..")) {
                index = end
            } else {
                var next = index
                if input[next] == ASCII.slash { next += 1 }
                while next < end, input[next] != ASCII.slash { next += 1 }
                input.withUnsafeBufferPointer { output.append($0, index..<next) }
                index = next
            }
        }
    }
}
