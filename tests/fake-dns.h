/* fake-dns.h - host names for tests that need more hosts than 127.0.0.1:
 * every name ending in ".test" resolves to 127.0.0.1 through the test
 * program's own getaddrinfo(), and its lookups are counted, so a test can
 * tell how often libcurl really resolved a name. Other names go to the
 * system's resolver. The program must be linked with
 * -Wl,--export-dynamic-symbol=getaddrinfo (see fake-dns.c). */
#ifndef SIEVE_TEST_FAKE_DNS_H
#define SIEVE_TEST_FAKE_DNS_H

/* Calls hook(name) before each lookup of a .test name, in the thread that
 * resolves it (libcurl's resolver thread); NULL for none. A hook may
 * block: that is how a test holds an answer back. */
void fake_dns_set_hook(void (*hook)(const char *name));

/* Lookups of name since the last fake_dns_reset(). */
int fake_dns_lookups(const char *name);

/* Forgets the counts. */
void fake_dns_reset(void);

#endif
