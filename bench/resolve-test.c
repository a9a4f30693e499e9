/* resolve-test.c - an LD_PRELOAD library for bench/hosts.sh: names under
 * .test (a top-level domain reserved for testing, RFC 6761, which no name
 * server answers) resolve to 127.0.0.1, so that one nginx on loopback
 * serves a thousand host names without touching /etc/hosts or a name
 * server.
 *
 *   cc -shared -fPIC -O2 -o resolve-test.so bench/resolve-test.c -ldl
 *   LD_PRELOAD=./resolve-test.so SIEVE_BENCH_DNS_MS=20 sieve crawl ...
 *
 * Only the lookup is replaced: curl still resolves every host the way it
 * does in a real crawl (its resolver thread, its DNS cache), and
 * getaddrinfo() still builds the answer, for the address 127.0.0.1.
 * SIEVE_BENCH_DNS_MS (default 0) makes each .test lookup sleep that many
 * milliseconds first, as a name server's round trip would. Every other
 * name goes to the real getaddrinfo(). */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef int getaddrinfo_fn(const char *, const char *, const struct addrinfo *, struct addrinfo **);
static getaddrinfo_fn *real_getaddrinfo;
static long delay_ms;

static void init(void)
{
    real_getaddrinfo = (getaddrinfo_fn *)dlsym(RTLD_NEXT, "getaddrinfo");
    const char *ms = getenv("SIEVE_BENCH_DNS_MS");
    delay_ms = ms != NULL ? strtol(ms, NULL, 10) : 0;
}

static int is_test_name(const char *node)
{
    size_t n = strlen(node);
    if (n > 0 && node[n - 1] == '.') /* an absolute name */
        n--;
    return n > 5 && strncasecmp(node + n - 5, ".test", 5) == 0;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init);
    if (real_getaddrinfo == NULL)
        return EAI_SYSTEM;
    if (node != NULL && is_test_name(node)) {
        if (delay_ms > 0) {
            struct timespec t = {delay_ms / 1000, delay_ms % 1000 * 1000000L};
            while (nanosleep(&t, &t) != 0 && errno == EINTR)
                ;
        }
        node = "127.0.0.1";
    }
    return real_getaddrinfo(node, service, hints, res);
}
