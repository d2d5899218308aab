#ifndef PRESIGND_EVENT_MEMORY_H
#define PRESIGND_EVENT_MEMORY_H

#include <stddef.h>

// libevent's allocation functions with a small per-thread cache of the buffer-chain sizes
// (powers of two from 1 KiB to 32 KiB): every read and every small response otherwise mallocs and
// frees one or two such chains, outside glibc's thread cache (which stops at 1032 bytes). Install
// with `event_set_mem_functions` before any other libevent call.
void *presignd_event_malloc(size_t size);
void *presignd_event_realloc(void *pointer, size_t size);
void presignd_event_free(void *pointer);

// Counters for tests: blocks currently cached by the calling thread, and their bytes.
size_t presignd_event_cached_blocks(void);
size_t presignd_event_cached_bytes(void);
// Returns the calling thread's cached blocks to malloc (also done when a thread exits).
void presignd_event_cache_flush(void);

#endif
