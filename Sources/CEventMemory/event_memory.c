#include "event_memory.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Each block starts with this header; 16 bytes keep malloc's alignment for the caller.
typedef struct {
    size_t size;
    size_t class_plus_one;  // 0: not a cached size
} block_header;

enum {
    min_shift = 10,  // 1 KiB
    class_count = 6,  // 1, 2, 4, 8, 16, 32 KiB
    max_blocks_per_class = 32,
    max_cached_bytes = 512 * 1024,
};

typedef struct {
    block_header *head[class_count];
    unsigned count[class_count];
    size_t bytes;
    int registered;
} block_cache;

static __thread block_cache cache;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static int size_class(size_t size) {
    if (size < ((size_t)1 << min_shift) || size > ((size_t)1 << (min_shift + class_count - 1))) return -1;
    if ((size & (size - 1)) != 0) return -1;
    return __builtin_ctzl(size) - min_shift;
}

static block_header **next_of(block_header *block) { return (block_header **)(block + 1); }

void presignd_event_cache_flush(void) {
    for (int c = 0; c < class_count; c++) {
        block_header *block = cache.head[c];
        while (block != NULL) {
            block_header *next = *next_of(block);
            free(block);
            block = next;
        }
        cache.head[c] = NULL;
        cache.count[c] = 0;
    }
    cache.bytes = 0;
}

static void flush_at_exit(void *unused) {
    (void)unused;
    presignd_event_cache_flush();
}

static void make_exit_key(void) { pthread_key_create(&exit_key, flush_at_exit); }

void *presignd_event_malloc(size_t size) {
    int c = size_class(size);
    if (c >= 0 && cache.head[c] != NULL) {
        block_header *block = cache.head[c];
        cache.head[c] = *next_of(block);
        cache.count[c]--;
        cache.bytes -= block->size;
        return block + 1;
    }
    if (size > SIZE_MAX - sizeof(block_header)) return NULL;
    block_header *block = malloc(sizeof(block_header) + size);
    if (block == NULL) return NULL;
    block->size = size;
    block->class_plus_one = (size_t)(c + 1);
    return block + 1;
}

void presignd_event_free(void *pointer) {
    if (pointer == NULL) return;
    block_header *block = (block_header *)pointer - 1;
    int c = (int)block->class_plus_one - 1;
    if (c >= 0 && cache.count[c] < max_blocks_per_class && cache.bytes + block->size <= max_cached_bytes) {
        if (!cache.registered) {
            // A thread that caches blocks returns them to malloc when it exits.
            pthread_once(&exit_key_once, make_exit_key);
            pthread_setspecific(exit_key, &cache);
            cache.registered = 1;
        }
        *next_of(block) = cache.head[c];
        cache.head[c] = block;
        cache.count[c]++;
        cache.bytes += block->size;
        return;
    }
    free(block);
}

void *presignd_event_realloc(void *pointer, size_t size) {
    if (pointer == NULL) return presignd_event_malloc(size);
    block_header *block = (block_header *)pointer - 1;
    if (block->class_plus_one == 0 && size_class(size) < 0) {
        if (size > SIZE_MAX - sizeof(block_header)) return NULL;
        block_header *moved = realloc(block, sizeof(block_header) + size);
        if (moved == NULL) return NULL;
        moved->size = size;
        return moved + 1;
    }
    void *copy = presignd_event_malloc(size);
    if (copy == NULL) return NULL;
    memcpy(copy, pointer, block->size < size ? block->size : size);
    presignd_event_free(pointer);
    return copy;
}

size_t presignd_event_cached_blocks(void) {
    size_t total = 0;
    for (int c = 0; c < class_count; c++) total += cache.count[c];
    return total;
}

size_t presignd_event_cached_bytes(void) { return cache.bytes; }
