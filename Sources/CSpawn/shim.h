// The two glibc calls the test kit's process launcher needs that Glibc's Swift module leaves out (they are
// declared only under _GNU_SOURCE / __USE_MISC); declared here and wrapped, so no header is included twice.
#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int pipe2(int fds[2], int flags);

/// Closes, in the child, every descriptor from `from` up (glibc 2.34 and later).
static inline int hlscache_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// pipe2(2): a pipe whose ends get `flags` (O_CLOEXEC) atomically.
static inline int hlscache_pipe2(int fds[2], int flags) {
    return pipe2(fds, flags);
}
