/* fuzz_links.c — libFuzzer target for the link parser (common/web/links.h).
 *
 * Input: one mode byte (bit 0: XML rather than HTML; bits 1-3 and 6: the charset,
 * from CHARSETS; bits 4-5: the page URL, from PAGES; bit 7, with bit 0 clear: the page's
 * requisites rather than its links, links_new_requisites, whose CSS url()s go through
 * css_urls.c), a chunk spec (fuzz_common.h), then the body. The body is parsed fed in
 * those chunks, and again whole: the links found (in order) must be the same, as
 * links.h promises. Every link handed over is non-empty and has no fragment.
 */
#include "fuzz_common.h"

#include "links.h"

#include <stdbool.h>

static const char *const CHARSETS[16] = {
    NULL,          "utf-8",    "iso-8859-1", "windows-1252",
    "shift_jis",   "utf-16le", "euc-jp",     "no-such-charset",
    "iso-2022-jp", "utf-16be", "gb18030",    "big5",
    "koi8-r",      "UTF8",     "latin1",     "",
};

static const char *const PAGES[4] = {
    "http://example.com/dir/page.html",
    "https://www.example.org:8443/a/b/?q=1",
    "http://[::1]:8080/",
    "http://h/",
};

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
    bool xml = mode & 1;
    bool requisites = !xml && (mode & 0x80);
    const char *charset = CHARSETS[((mode >> 1) & 7) | ((mode >> 3) & 8)];
    const char *page = PAGES[(mode >> 4) & 3];
    chunker ch = chunker_take(&data, &size);

    record split = {0}, whole = {0};
    parse(&split, page, charset, xml, requisites, data, size, &ch);
    parse(&whole, page, charset, xml, requisites, data, size, NULL);
    FUZZ_CHECK(record_equal(&split, &whole));
    record_free(&split);
    record_free(&whole);
    return 0;
}
