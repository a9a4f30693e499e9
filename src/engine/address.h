/* address.h - which addresses a crawl may connect to. A link on the web
 * must not make the crawler reach into the network it runs in: a host
 * that resolves to a loopback, private, link-local or unspecified address
 * is not connected to, unless a seed names that host (the user asked for
 * it) or allow_private is set. The check is on the address curl is about
 * to connect to, so a name that resolves differently each time, and every
 * redirect hop, is judged by what it really resolved to. */
#ifndef SIEVE_ADDRESS_H
#define SIEVE_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Whether addr is loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12,
 * 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10, cloud
 * metadata addresses among them) or unspecified (0.0.0.0/8, ::); IPv4
 * mapped into IPv6 is judged as IPv4. */
bool address_is_internal(const struct sockaddr *addr);

/* The host of the canonical URL url (no port, IPv6 with its brackets). */
const char *address_host_of(const char *url, size_t *len);

#endif
