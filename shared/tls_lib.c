/* OpenSSL's functions as one table: dlopen, or linked in (see tls_lib.h). */
#include "shared/tls_lib.h"

#ifndef MT_NO_TLS
#include <stdio.h>

#ifdef MT_TLS_STATIC

static const struct tls_lib linked = {
#define TLS_LIB_ADDRESS(lib, fn) .fn = fn,
    TLS_LIB_FUNCTIONS(TLS_LIB_ADDRESS)
#undef TLS_LIB_ADDRESS
};

const struct tls_lib *tls_lib_get(char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return &linked;
}

#else /* loaded on first use */

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <openssl/opensslv.h>

#define TLS_LIB_STR(x) #x
#define TLS_LIB_SONAME(base, v) base TLS_LIB_STR(v)
/* The ABI of the headers this was built with (3 for OpenSSL 3.x). */
static const char *const sonames[] = {
    TLS_LIB_SONAME("libcrypto.so.", OPENSSL_SHLIB_VERSION),
    TLS_LIB_SONAME("libssl.so.", OPENSSL_SHLIB_VERSION),
};
enum { LIB_crypto, LIB_ssl };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct tls_lib table;
static const struct tls_lib *loaded;
static char why[300];

/* The libraries stay loaded for the rest of the run: OpenSSL keeps
 * per-thread state and exit handlers of its own, and a connection may
 * outlive any one caller. */
static void load(void)
{
    void *handle[2];
    for (int i = 0; i < 2; i++) {
        handle[i] = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle[i]) {
            const char *e = dlerror();
            snprintf(why, sizeof(why), "cannot load OpenSSL (%s): %s", sonames[i],
                     e ? e : "unknown reason");
            return;
        }
    }
    void *sym;
#define TLS_LIB_LOOKUP(lib, fn)                                                                   \
    sym = dlsym(handle[LIB_##lib], #fn);                                                          \
    if (!sym) {                                                                                   \
        snprintf(why, sizeof(why), "cannot load OpenSSL: %s has no %s", sonames[LIB_##lib], #fn); \
        return;                                                                                   \
    }                                                                                             \
    memcpy(&table.fn, &sym, sizeof(sym));
    TLS_LIB_FUNCTIONS(TLS_LIB_LOOKUP)
#undef TLS_LIB_LOOKUP
    loaded = &table;
}

const struct tls_lib *tls_lib_get(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (!loaded)
        snprintf(err, errlen, "%s", why);
    return loaded;
}

#endif /* MT_TLS_STATIC */
#endif /* MT_NO_TLS */
