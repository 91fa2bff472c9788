/* fuzz_links.c — libFuzzer target for the link parser (common/web/links.h).
 *
 * Input: one mode byte (links_mode.h: XML or HTML, the charset, the page URL, and the
 * page's requisites rather than its links, links_new_requisites, whose CSS url()s go
 * through css_urls.c), a chunk spec (fuzz_common.h), then the body. The body is parsed fed in
 * those chunks, and again whole: the links found (in order) must be the same, as
 * links.h promises. Every link handed over is non-empty and has no fragment.
 */
#include "fuzz_common.h"

#include "links.h"
#include "links_mode.h"

#include <stdbool.h>

static void collect(void *ctx, const char *url)
{
    FUZZ_CHECK(url && *url && !strchr(url, '#'));
    record *r = ctx;
    record_adds(r, url);
    record_add(r, "\n", 1);
}

static void parse(record *out, const char *page, const char *charset, bool xml, bool requisites,
                  const uint8_t *data, size_t size, chunker *ch)
{
    links_parser *lp = requisites ? links_new_requisites(page, charset, collect, out)
                                  : links_new(page, charset, xml, collect, out);
    FUZZ_CHECK(lp != NULL);
    size_t off = 0;
    do {
        size_t n = ch ? chunker_next(ch, size - off) : size - off;
        links_feed(lp, (const char *)data + off, n);
        off += n;
    } while (off < size);
    links_finish(lp);
    links_free(lp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    links_mode m = links_mode_of(mode);
    chunker ch = chunker_take(&data, &size);

    record split = {0}, whole = {0};
    parse(&split, m.page, m.charset, m.xml, m.requisites, data, size, &ch);
    parse(&whole, m.page, m.charset, m.xml, m.requisites, data, size, NULL);
    FUZZ_CHECK(record_equal(&split, &whole));
    record_free(&split);
    record_free(&whole);
    return 0;
}
