/* robots.c - the --robots modes: how /robots.txt answers.
 *
 * The crawler's politeness code has to cope with every way a real site's
 * robots.txt goes wrong, so the server can make it allow everything (the
 * default), carry any rules from a file, be missing (404), fail (500),
 * never answer (hang) or move (a 301 to /robots-moved.txt). Only the body
 * of file:PATH needs state: it is read once here, before the server starts,
 * so a bad file stops the program at the command line instead of turning
 * into 500s in the middle of a test, and serving it needs no I/O.
 *
 * The modes change only what /robots.txt answers, never the link graph or
 * the truth: a test that uses disallow rules subtracts what they forbid
 * from the truth itself.
 *
 * With --sitemap the allow file also names http://HOST/sitemap.xml, HOST
 * being the authority the client asked for, like every absolute link: the
 * sitemap is then on the host the crawler is seeding, whatever loopback
 * address or port the instance runs on. Only the allow mode can carry it
 * (main.c refuses --sitemap with the others), so the other modes' bodies
 * stay exactly what they were. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "web.h"

const char web_robots_allow[] = "User-agent: *\nDisallow:\n";

void web_robots_render_allow(const struct web_config *cfg, const char *host, struct web_buf *out)
{
    web_buf_puts(out, web_robots_allow);
    if (cfg->sitemap)
        web_buf_printf(out, "Sitemap: http://%s/sitemap.xml\n", host);
}

/* Reads all of path into a new buffer, refusing more than max bytes.
 * Reading one byte past max instead of trusting st_size also bounds
 * pipes and files that grow while being read. */
static int read_bounded(const char *path, size_t max, char **out, size_t *len, char *err,
                        size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "--robots: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(max + 1);
    size_t n = 0;
    int rc = -1;
    if (!buf) {
        snprintf(err, errlen, "--robots: out of memory");
        goto done;
    }
    while (n <= max) {
        ssize_t got = read(fd, buf + n, max + 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, errlen, "--robots: cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n > max) {
        snprintf(err, errlen, "--robots: '%s' is larger than %zu bytes", path, max);
        goto done;
    }
    *out = buf;
    *len = n;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    close(fd);
    return rc;
}

int web_robots_parse(const char *arg, struct web_config *cfg, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        enum web_robots_mode mode;
    } fixed[] = {
        {"allow", WEB_ROBOTS_ALLOW}, {"404", WEB_ROBOTS_404},           {"500", WEB_ROBOTS_500},
        {"hang", WEB_ROBOTS_HANG},   {"redirect", WEB_ROBOTS_REDIRECT},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if (strcmp(arg, fixed[i].name) == 0) {
            web_robots_free(cfg);
            cfg->robots = fixed[i].mode;
            return 0;
        }
    }
    if (strncmp(arg, "file:", 5) != 0 || arg[5] == '\0') {
        snprintf(err, errlen,
                 "--robots wants allow, file:PATH, 404, 500, hang or redirect, not '%s'", arg);
        return -1;
    }
    char *body;
    size_t len;
    if (read_bounded(arg + 5, WEB_ROBOTS_MAX, &body, &len, err, errlen) != 0)
        return -1;
    web_robots_free(cfg);
    cfg->robots = WEB_ROBOTS_FILE;
    cfg->robots_body = body;
    cfg->robots_len = len;
    return 0;
}

void web_robots_free(struct web_config *cfg)
{
    free((void *)(uintptr_t)cfg->robots_body);
    cfg->robots_body = NULL;
    cfg->robots_len = 0;
    cfg->robots = WEB_ROBOTS_ALLOW;
}
