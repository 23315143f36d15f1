// Typed wrappers over libcurl's variadic and macro-heavy C API, so that Swift can call it.
//
// Everything here is `static inline`: a system-library target has no compiled sources.
// Only the OriginClient target includes this header; nothing else talks to libcurl.
#ifndef HLSCACHE_CCURL_SHIM_H
#define HLSCACHE_CCURL_SHIM_H

#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

// MARK: - Constants that are macros too complex for Swift to import

static const long hlscache_CURL_GLOBAL_DEFAULT = CURL_GLOBAL_DEFAULT;
static const int hlscache_CURLPAUSE_CONT = CURLPAUSE_CONT;
static const size_t hlscache_CURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const curl_socket_t hlscache_CURL_SOCKET_BAD = CURL_SOCKET_BAD;
static const int hlscache_CURL_PREREQFUNC_OK = CURL_PREREQFUNC_OK;
static const int hlscache_CURL_PREREQFUNC_ABORT = CURL_PREREQFUNC_ABORT;
static const long hlscache_CURL_MAX_WRITE_SIZE = CURL_MAX_WRITE_SIZE;

/// The runtime libcurl version as 0xXXYYZZ (`CURLVERSION_NOW` is a macro Swift cannot import).
static inline unsigned int hlscache_curl_version_num(void) {
    return curl_version_info(CURLVERSION_NOW)->version_num;
}

// MARK: - curl_easy_setopt, one wrapper per argument type

static inline CURLcode hlscache_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hlscache_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hlscache_curl_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hlscache_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hlscache_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hlscache_curl_setopt_share(CURL *handle, CURLSH *share) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, share);
}

/// CURLOPT_WRITEFUNCTION or CURLOPT_HEADERFUNCTION.
static inline CURLcode hlscache_curl_setopt_write_func(CURL *handle, CURLoption option, curl_write_callback fn) {
    return curl_easy_setopt(handle, option, fn);
}

static inline CURLcode hlscache_curl_setopt_opensocket_func(CURL *handle, curl_opensocket_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, fn);
}

static inline CURLcode hlscache_curl_setopt_prereq_func(CURL *handle, curl_prereq_callback fn) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, fn);
}

// MARK: - curl_easy_getinfo, one wrapper per result type

static inline CURLcode hlscache_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode hlscache_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// The string stays owned by curl; copy it before the handle changes.
static inline CURLcode hlscache_curl_getinfo_str(CURL *handle, CURLINFO info, const char **value) {
    char *result = NULL;
    CURLcode code = curl_easy_getinfo(handle, info, &result);
    *value = result;
    return code;
}

// MARK: - Multi and share handles

static inline CURLMcode hlscache_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLSHcode hlscache_curl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

/// The result of a CURLMSG_DONE message (reads the anonymous union).
static inline CURLcode hlscache_curlmsg_result(const CURLMsg *message) {
    return message->data.result;
}

// MARK: - Sockets for CURLOPT_OPENSOCKETFUNCTION

/// Copies the IP address curl is about to connect to into `bytes` (4 bytes for IPv4, 16 for IPv6).
///
/// Returns 4 or 6 for the address family, or 0 when the family is neither (e.g. a Unix socket).
static inline int hlscache_curl_sockaddr_ip(const struct curl_sockaddr *address, unsigned char bytes[16]) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)(const void *)&address->addr;
        memcpy(bytes, &in4->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)&address->addr;
        memcpy(bytes, &in6->sin6_addr, 16);
        return 6;
    }
    return 0;
}

/// Opens the socket curl asked for (what curl does when no callback is set), close-on-exec.
static inline curl_socket_t hlscache_curl_open_socket(const struct curl_sockaddr *address) {
#ifdef SOCK_CLOEXEC
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
#else
    return socket(address->family, address->socktype, address->protocol);
#endif
}

// MARK: - The worker thread

/// A non-blocking, close-on-exec eventfd for waking the worker, or -1 (errno says why).
static inline int hlscache_wake_fd_open(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/// Makes `fd` readable (a wake-up that is not yet taken stays one).
static inline void hlscache_wake_fd_signal(int fd) {
    eventfd_t one = 1;
    (void)eventfd_write(fd, one);
}

/// Takes the wake-ups `fd` holds, if any.
static inline void hlscache_wake_fd_drain(int fd) {
    eventfd_t value;
    (void)eventfd_read(fd, &value);
}

/// `curl_multi_poll` with `fd` as its one extra descriptor, waited on for reading.
static inline CURLMcode hlscache_curl_multi_poll_with(CURLM *multi, int fd, int timeout_ms) {
    struct curl_waitfd extra;
    extra.fd = fd;
    extra.events = CURL_WAIT_POLLIN;
    extra.revents = 0;
    return curl_multi_poll(multi, &extra, 1, timeout_ms, NULL);
}

#if defined(__linux__)
// glibc declares it only under _GNU_SOURCE, which a module map cannot set before system headers.
extern int pthread_setname_np(pthread_t thread, const char *name);
#endif

#if defined(__linux__)
// Also _GNU_SOURCE only; the mask is a plain array of 1,024 bits here (glibc's cpu_set_t).
extern int sched_getaffinity(pid_t pid, size_t cpusetsize, void *mask);
extern int sched_setaffinity(pid_t pid, size_t cpusetsize, const void *mask);
#endif

#if defined(__linux__)
extern int pthread_setaffinity_np(pthread_t thread, size_t cpusetsize, const void *mask);
#endif

/// Writes the processors in the affinity mask of thread `tid` (a kernel thread id of this process, as listed in
/// /proc/self/task; 0 for the calling thread) to `cpus`, in increasing order (at most `capacity` of them); returns how
/// many the mask holds, or -1 when it cannot be read.
static inline int hlscache_thread_affinity_list(int tid, int *cpus, int capacity) {
#if defined(__linux__)
    unsigned long long mask[16];
    memset(mask, 0, sizeof mask);
    if (sched_getaffinity((pid_t)tid, sizeof mask, mask) != 0) return -1;
    int count = 0;
    for (int cpu = 0; cpu < 1024; cpu++) {
        if ((mask[cpu / 64] >> (cpu % 64)) & 1ULL) {
            if (count < capacity) cpus[count] = cpu;
            count++;
        }
    }
    return count;
#else
    (void)tid;
    (void)cpus;
    (void)capacity;
    return -1;
#endif
}

/// Writes the numbers of the processors in the calling thread's affinity mask, in increasing order, to `cpus` (at
/// most `capacity` of them); returns how many the mask holds, or -1 when it cannot be read.
static inline int hlscache_affinity_list(int *cpus, int capacity) {
    return hlscache_thread_affinity_list(0, cpus, capacity);
}

/// The processors in the calling thread's affinity mask, or -1 when it cannot be read.
static inline int hlscache_affinity_count(void) {
    return hlscache_affinity_list(NULL, 0);
}

/// Binds `thread` to processor `cpu` (0 to 1023): 0, or the error number.
static inline int hlscache_bind_thread(pthread_t thread, int cpu) {
#if defined(__linux__)
    if (cpu < 0 || cpu >= 1024) return EINVAL;
    unsigned long long mask[16];
    memset(mask, 0, sizeof mask);
    mask[cpu / 64] = 1ULL << (cpu % 64);
    return pthread_setaffinity_np(thread, sizeof mask, mask);
#else
    (void)thread;
    (void)cpu;
    return ENOSYS;
#endif
}

/// Binds the calling thread to processor `cpu` (0 to 1023): 0, or the error number.
static inline int hlscache_bind_current_thread(int cpu) {
    return hlscache_bind_thread(pthread_self(), cpu);
}

/// Sets the affinity mask of thread `tid` (this process's) to the `count` processors of `cpus` (each 0 to 1023):
/// 0, or the error number.
static inline int hlscache_set_thread_affinity(int tid, const int *cpus, int count) {
#if defined(__linux__)
    unsigned long long mask[16];
    memset(mask, 0, sizeof mask);
    for (int index = 0; index < count; index++) {
        if (cpus[index] < 0 || cpus[index] >= 1024) return EINVAL;
        mask[cpus[index] / 64] |= 1ULL << (cpus[index] % 64);
    }
    return sched_setaffinity((pid_t)tid, sizeof mask, mask) == 0 ? 0 : errno;
#else
    (void)tid;
    (void)cpus;
    (void)count;
    return ENOSYS;
#endif
}

/// Names the calling thread (at most 15 bytes are kept on Linux), for debuggers and `top -H`.
static inline void hlscache_name_current_thread(const char *name) {
#if defined(__linux__)
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    (void)pthread_setname_np(pthread_self(), truncated);
#elif defined(__APPLE__)
    (void)pthread_setname_np(name);
#endif
}

#endif
