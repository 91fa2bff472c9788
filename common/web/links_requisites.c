/* links_requisites.c — the URLs a start tag makes a browser load (links_requisites.h). */
#include "links_requisites.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "css_urls.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static const char *attr(const char *const *atts, const char *name)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcasecmp(atts[i], name) == 0)
            return atts[i + 1] ? atts[i + 1] : "";
    return NULL;
}

/* Whether rel (a space-separated set of tokens, any case) holds one that loads what
 * the page shows: stylesheet or icon. */
static bool rel_loads(const char *rel)
{
    const char *p = rel;
    while (*p) {
        while (is_space(*p))
            p++;
        size_t n = 0;
        while (p[n] && !is_space(p[n]))
            n++;
        if ((n == 10 && strncasecmp(p, "stylesheet", n) == 0)
            || (n == 4 && strncasecmp(p, "icon", n) == 0))
            return true;
        p += n;
    }
    return false;
}

void requisites_srcset(const char *srcset, requisite_fn fn, void *ctx)
{
    const char *p = srcset;
    for (;;) {
        while (is_space(*p) || *p == ',')
            p++;
        if (!*p)
            return;
        size_t n = 0;
        while (p[n] && !is_space(p[n]))
            n++;
        size_t url_len = n;
        while (url_len > 0 && p[url_len - 1] == ',')
            url_len--; /* "a.png," : the URL without its commas, no descriptors */
        char *url = xstrndup(p, url_len);
        if (url_len > 0)
            fn(ctx, url);
        free(url);
        p += n;
        if (url_len < n)
            continue;
        /* the descriptors, up to the comma outside parentheses */
        int depth = 0;
        while (*p && !(*p == ',' && depth == 0)) {
            depth += *p == '(' ? 1 : *p == ')' && depth > 0 ? -1 : 0;
            p++;
        }
    }
}

static void once(requisite_fn fn, void *ctx, const char *url)
{
    if (url && *url)
        fn(ctx, url);
}

void requisites_of_tag(const char *name, const char *const *atts, requisite_fn fn, void *ctx)
{
    if (!atts)
        return;
    if (strcmp(name, "img") == 0 || strcmp(name, "source") == 0) {
        once(fn, ctx, attr(atts, "src"));
        const char *set = attr(atts, "srcset");
        if (set)
            requisites_srcset(set, fn, ctx);
    } else if (strcmp(name, "script") == 0 || strcmp(name, "audio") == 0) {
        once(fn, ctx, attr(atts, "src"));
    } else if (strcmp(name, "video") == 0) {
        once(fn, ctx, attr(atts, "poster"));
        once(fn, ctx, attr(atts, "src"));
    } else if (strcmp(name, "link") == 0) {
        const char *rel = attr(atts, "rel");
        if (rel && rel_loads(rel))
            once(fn, ctx, attr(atts, "href"));
    }
    const char *style = attr(atts, "style");
    if (style)
        css_urls(style, strlen(style), fn, ctx);
}
