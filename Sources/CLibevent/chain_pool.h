#ifndef PRESIGND_CHAIN_POOL_H
#define PRESIGND_CHAIN_POOL_H
// A per-thread cache of the blocks libevent allocates for evbuffer chains (DESIGN §7).
//
// libevent sizes a chain as a power of two at least 1 KiB; presignd's reads reserve 4 KiB and more, so every
// proxied request allocates and frees a few 8-64 KiB chains. glibc serves blocks over 1032 bytes from its general
// bins (some 300 instructions each way); this cache keeps a few freed blocks per size class on the thread that
// freed them and hands them out again in a few instructions.
//
// Blocks carry a 16-byte header: the size class, then a magic value where glibc keeps a chunk's size field, so
// freeing a block libevent allocated before the cache was installed (plain malloc) is recognised and passed to
// free(). Sizes outside the classes go to malloc unchanged.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PRESIGND_POOL_MAGIC 0x444E474953455250ULL /* "PRESIGND": never a glibc chunk size */
#define PRESIGND_POOL_HEADER 16
#define PRESIGND_POOL_MIN_SHIFT 11 /* 2 KiB */
#define PRESIGND_POOL_CLASSES 6    /* 2 KiB ... 64 KiB */
#define PRESIGND_POOL_CLASS_BYTES (64 * 1024) /* kept per class and thread: 32 x 2 KiB ... 2 x 64 KiB */

/* The free lists and their lengths, per thread. Statics inside a function: Swift's importer emits what an inline
   function it calls refers to, but not a header's file-scope variables. */
typedef struct {
    void *lists[PRESIGND_POOL_CLASSES];
    unsigned counts[PRESIGND_POOL_CLASSES];
} presignd_pool_state;

static inline presignd_pool_state *presignd_pool(void) {
    static _Thread_local presignd_pool_state state;
    return &state;
}

static inline int presignd_pool_class(size_t size) {
    if (size <= 1024 || size > ((size_t)1 << (PRESIGND_POOL_MIN_SHIFT + PRESIGND_POOL_CLASSES - 1))) return -1;
    int index = 0;
    while (((size_t)1 << (PRESIGND_POOL_MIN_SHIFT + index)) < size) index++;
    return index;
}

static inline unsigned presignd_pool_depth(int index) {
    unsigned depth = (unsigned)(PRESIGND_POOL_CLASS_BYTES >> (PRESIGND_POOL_MIN_SHIFT + index));
    return depth < 2 ? 2 : depth;
}

static inline uint64_t *presignd_pool_header(void *pointer) {
    return (uint64_t *)((unsigned char *)pointer - PRESIGND_POOL_HEADER);
}

static inline void *presignd_pool_malloc(size_t size) {
    int index = presignd_pool_class(size);
    if (index < 0) return malloc(size);
    presignd_pool_state *pool = presignd_pool();
    void *cached = pool->lists[index];
    if (cached != NULL) {
        memcpy(&pool->lists[index], cached, sizeof(void *)); /* the next block */
        pool->counts[index]--;
        return cached;
    }
    uint64_t *block = (uint64_t *)malloc(PRESIGND_POOL_HEADER + ((size_t)1 << (PRESIGND_POOL_MIN_SHIFT + index)));
    if (block == NULL) return NULL;
    block[0] = (uint64_t)index;
    block[1] = PRESIGND_POOL_MAGIC;
    return (unsigned char *)block + PRESIGND_POOL_HEADER;
}

static inline void presignd_pool_free(void *pointer) {
    if (pointer == NULL) return;
    uint64_t *header = presignd_pool_header(pointer);
    if (header[1] != PRESIGND_POOL_MAGIC) {
        free(pointer);
        return;
    }
    int index = (int)header[0];
    presignd_pool_state *pool = presignd_pool();
    if (pool->counts[index] < presignd_pool_depth(index)) {
        memcpy(pointer, &pool->lists[index], sizeof(void *));
        pool->lists[index] = pointer;
        pool->counts[index]++;
        return;
    }
    header[1] = 0;
    free(header);
}

static inline void *presignd_pool_realloc(void *pointer, size_t size) {
    if (pointer == NULL) return presignd_pool_malloc(size);
    uint64_t *header = presignd_pool_header(pointer);
    if (header[1] != PRESIGND_POOL_MAGIC) return realloc(pointer, size);
    size_t capacity = (size_t)1 << (PRESIGND_POOL_MIN_SHIFT + header[0]);
    if (size > 0 && size <= capacity) return pointer;
    void *moved = presignd_pool_malloc(size);
    if (moved == NULL) return NULL; /* as realloc: the old block stays valid */
    memcpy(moved, pointer, size < capacity ? size : capacity);
    presignd_pool_free(pointer);
    return moved;
}

/// Routes libevent's allocations through the cache. Call once, before other libevent calls where possible.
static inline void presignd_install_chain_pool(void) {
    event_set_mem_functions(presignd_pool_malloc, presignd_pool_realloc, presignd_pool_free);
}

#endif
