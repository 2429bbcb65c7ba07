/* --key FILE: a pre-shared key that authenticates both ends and encrypts the
 * connection, with TLS 1.3 in PSK mode (OpenSSL; psk_dhe_ke, so a recorded
 * session stays secret even if the key leaks later).  The TLS roles follow
 * the protocol, not the TCP direction: memtrace-fs is always the TLS server
 * and memtrace the client, also with -l / memtrace-fs -c.
 *
 * Nothing is hand-made: the PSK is SHA-256 of the key file (any length from
 * 16 bytes up), the record layer, replay protection (fresh randoms and key
 * shares on both sides, no 0-RTT) and version pinning (TLS 1.3 only) are
 * OpenSSL's.
 *
 * A socket with TLS started on it is read and written through it by
 * wire_send/wire_recv/wire_handshake, whichever thread owns it; wire_close
 * ends both.  OpenSSL is called through shared/tls_lib.h: native builds
 * load it at the first wire_key_load, and say in one line when they
 * cannot.  Built without OpenSSL (MT_NO_TLS: ARCH=i386, or a cross build
 * whose libssl-dev could not be fetched), wire_key_load says so in one
 * line. */
#ifndef MT_SHARED_WIRE_TLS_H
#define MT_SHARED_WIRE_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_KEY_MIN 16
#define WIRE_KEY_MAX 4096

struct wire_key;

/* Reads the key file; NULL with a one-line err (missing, too short, or no
 * TLS in this build).  Warns when others may read the file. */
struct wire_key *wire_key_load(const char *path, char *err, size_t errlen);
void wire_key_free(struct wire_key *k);
/* False when this build has no TLS. */
bool wire_tls_available(void);

/* Runs the TLS handshake on the connected socket fd (server: memtrace-fs),
 * within timeout_ms.  0, or -1 with a one-line err (wrong key, no TLS on
 * the other side, an old protocol version, a replayed or cut handshake). */
int wire_tls_start(int fd, const struct wire_key *k, bool server, int timeout_ms, char *err,
                   size_t errlen);

/* Used by wire_io.c: is TLS on fd? */
void *wire_tls_of(int fd);
/* One read/write through fd's TLS (non-blocking socket): bytes, 0 at a
 * clean close, -1 with errno (EAGAIN: wait for *want, POLLIN or POLLOUT). */
long wire_tls_read(void *t, void *buf, size_t len, short *want);
long wire_tls_write(void *t, const void *buf, size_t len, short *want);
/* Decrypted bytes waiting (poll on the socket would not see them). */
bool wire_tls_pending(void *t);

/* Ends TLS on fd (if any) and closes it. */
void wire_close(int fd);
/* The same without a word to the peer: after a fork, when another process
 * has gone on with the connection and our TLS state is stale. */
void wire_forget(int fd);

#endif
