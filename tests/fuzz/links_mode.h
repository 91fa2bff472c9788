/* links_mode.h — what the first byte of a fuzz_links input says (its mode), for
 * fuzz_links.c and for test_links_tokenizer.c, which replays fuzz_links' corpus the
 * same way: bit 0, XML rather than HTML; bits 1-3 and 6, the charset, from
 * LINKS_MODE_CHARSETS; bits 4-5, the page URL, from LINKS_MODE_PAGES; bit 7, with bit 0
 * clear, the page's requisites rather than its links. */
#ifndef CRAWL_LINKS_MODE_H
#define CRAWL_LINKS_MODE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct links_mode {
    bool xml, requisites;
    const char *charset, *page;
} links_mode;

static inline links_mode links_mode_of(uint8_t mode)
{
    static const char *const charsets[16] = {
        NULL,          "utf-8",    "iso-8859-1", "windows-1252",
        "shift_jis",   "utf-16le", "euc-jp",     "no-such-charset",
        "iso-2022-jp", "utf-16be", "gb18030",    "big5",
        "koi8-r",      "UTF8",     "latin1",     "",
    };
    static const char *const pages[4] = {
        "http://example.com/dir/page.html",
        "https://www.example.org:8443/a/b/?q=1",
        "http://[::1]:8080/",
        "http://h/",
    };
    bool xml = mode & 1;
    return (links_mode){.xml = xml,
                        .requisites = !xml && (mode & 0x80),
                        .charset = charsets[((mode >> 1) & 7) | ((mode >> 3) & 8)],
                        .page = pages[(mode >> 4) & 3]};
}

#endif
