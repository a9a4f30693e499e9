/* fake-dns.c - see fake-dns.h.
 *
 * libcurl resolves names with getaddrinfo(), in a thread of its own when
 * it is built with the threaded resolver, as Debian's is. This file
 * defines getaddrinfo() in the test program itself: the executable comes
 * first in the dynamic linker's search order, so libcurl's call (through
 * its PLT) lands here, before libc's and before the interceptor that a
 * sanitizer runtime puts in front of libc's; RTLD_NEXT is then whatever
 * comes after the program (the sanitizer's interceptor, or libc), so a
 * sanitizer still sees every call. An executable's symbol is in its
 * dynamic table, where libcurl can find it, only if the link put it
 * there: meson.build asks for it (--export-dynamic-symbol) rather than
 * count on a library of the link line naming getaddrinfo. Tests that rely
 * on it check that their names were looked up here, so a build where the
 * override does not take effect fails instead of passing for nothing. */
#include <dlfcn.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "fake-dns.h"

enum { FAKE_DNS_NAMES = 256, FAKE_DNS_NAME_MAX = 64 };

static struct {
    pthread_mutex_t lock;
    int n;
    char name[FAKE_DNS_NAMES][FAKE_DNS_NAME_MAX];
    int lookups[FAKE_DNS_NAMES];
} names = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Atomic(void (*)(const char *)) hook;

typedef int getaddrinfo_fn(const char *, const char *, const struct addrinfo *, struct addrinfo **);
static getaddrinfo_fn *real_getaddrinfo;

static void find_real_getaddrinfo(void)
{
    real_getaddrinfo = (getaddrinfo_fn *)dlsym(RTLD_NEXT, "getaddrinfo");
}

void fake_dns_set_hook(void (*h)(const char *name))
{
    atomic_store(&hook, h);
}

/* The name's slot, made if new; -1 when the table is full. Locked. */
static int slot(const char *name)
{
    for (int i = 0; i < names.n; i++)
        if (strcmp(names.name[i], name) == 0)
            return i;
    if (names.n == FAKE_DNS_NAMES)
        return -1;
    snprintf(names.name[names.n], FAKE_DNS_NAME_MAX, "%s", name);
    names.lookups[names.n] = 0;
    return names.n++;
}

int fake_dns_lookups(const char *name)
{
    pthread_mutex_lock(&names.lock);
    int i = slot(name), n = i < 0 ? 0 : names.lookups[i];
    pthread_mutex_unlock(&names.lock);
    return n;
}

void fake_dns_reset(void)
{
    pthread_mutex_lock(&names.lock);
    names.n = 0;
    pthread_mutex_unlock(&names.lock);
}

static int is_test_name(const char *node)
{
    size_t n = strlen(node);
    return n > 5 && n < FAKE_DNS_NAME_MAX && strcmp(node + n - 5, ".test") == 0;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_real_getaddrinfo);
    if (real_getaddrinfo == NULL)
        return EAI_SYSTEM;
    if (node != NULL && is_test_name(node)) {
        pthread_mutex_lock(&names.lock);
        int i = slot(node);
        if (i >= 0)
            names.lookups[i]++;
        pthread_mutex_unlock(&names.lock);
        void (*h)(const char *) = atomic_load(&hook);
        if (h != NULL)
            h(node);
        node = "127.0.0.1";
    }
    return real_getaddrinfo(node, service, hints, res);
}
