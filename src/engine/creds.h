/* creds.h - credentials per origin: those of a seed's userinfo, and the
 * user option's for every seed origin. They are sent to their own origin
 * only: a link or a redirect to another host never carries them. */
#ifndef SIEVE_CREDS_H
#define SIEVE_CREDS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct creds creds;

int creds_new(creds **out);
void creds_free(creds *c);

/* Sets the user and password (copied) of the origin "scheme://authority"
 * (len bytes), replacing earlier ones. keep: an origin that has some
 * already keeps them (a seed's own userinfo wins over the user option).
 * Not thread-safe: call before the workers start. */
int creds_set(creds *c, const char *origin, size_t len, const char *user, const char *password,
              bool keep);

/* The credentials of the origin of the canonical url, if it has any.
 * Lock-free: the table is only read once the workers run. */
bool creds_find(const creds *c, const char *url, const char **user, const char **password);

#endif
