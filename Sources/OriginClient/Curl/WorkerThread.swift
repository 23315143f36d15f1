import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A dedicated POSIX thread, for the loop that drives the curl multi handle (it blocks in
/// `curl_multi_poll`, so it must not run on the Swift concurrency pool).
struct WorkerThread: Sendable {
    private final class Entry {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    #if canImport(Glibc)
    private let handle: pthread_t
    #else
    private let handle: UInt
    #endif

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept on Linux).
    static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(OriginError) -> WorkerThread {
        let entry = Unmanaged.passRetained(Entry(name: name, body: body)).toOpaque()
        #if canImport(Glibc)
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                guard let argument else { return nil }
                let entry = Unmanaged<Entry>.fromOpaque(argument).takeRetainedValue()
                hlscache_name_current_thread(entry.name)
                entry.body()
                return nil
            }, entry)
        guard result == 0 else {
            Unmanaged<Entry>.fromOpaque(entry).release()
            throw .invalidConfiguration(reason: "cannot start the origin client thread (error \(result))")
        }
        return WorkerThread(handle: handle)
        #else
        Unmanaged<Entry>.fromOpaque(entry).release()
        throw .invalidConfiguration(reason: "the origin client runs on Linux only")
        #endif
    }

    /// Binds the thread to `processor`.
    /// - Throws: ``ProcessorAffinity/BindingError`` when the kernel refuses.
    func bind(to processor: Int) throws(ProcessorAffinity.BindingError) {
        #if canImport(Glibc)
        let code = hlscache_bind_thread(handle, Int32(clamping: processor))
        #else
        let code = ENOSYS
        #endif
        guard code == 0 else { throw ProcessorAffinity.BindingError(processor: processor, code: code) }
    }

    /// Waits for the thread to end.
    func join() {
        #if canImport(Glibc)
        _ = pthread_join(handle, nil)
        #endif
    }
}
