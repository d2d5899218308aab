#ifndef PRESIGND_CLIBEVENT_SHIM_H
#define PRESIGND_CLIBEVENT_SHIM_H
// libc first: libevent's config header turns on _GNU_SOURCE, and glibc's fd_set must match
// what the Glibc module sees (DESIGN §7).
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
// mallinfo2 for the heap-in-use gauge (the Glibc module does not export malloc.h).
#include <malloc.h>

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <event2/dns.h>
#include <event2/thread.h>
#include <event2/util.h>

/// A 4 KiB scratch buffer per thread, for coalescing a few small pieces into one send (PresigndIO's SocketWriter.send): Swift's
/// withUnsafeTemporaryAllocation puts allocations over 1 KiB on the heap on Linux, a malloc and free per flush.
#define PRESIGND_SEND_SCRATCH_BYTES 4096
static inline unsigned char *presignd_send_scratch(void) {
    static _Thread_local unsigned char scratch[PRESIGND_SEND_SCRATCH_BYTES] __attribute__((aligned(16)));
    return scratch;
}

#endif
