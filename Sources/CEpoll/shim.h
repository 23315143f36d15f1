// epoll(7), which Glibc's Swift module leaves out: for the benchmark's fan-out clients (hlscache-bench
// fanout-clients), a thousand sockets in one thread.
#include <sys/epoll.h>
