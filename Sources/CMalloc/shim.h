// glibc's allocator settings (mallopt), which Glibc's Swift module does not carry.
#include <malloc.h>
