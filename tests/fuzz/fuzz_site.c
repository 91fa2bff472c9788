/* fuzz_site.c — libFuzzer target for the testsite scenario-file parser
 * (tests/testsite/site.h), run from memory with site_parse_buffer (no @file reads).
 *
 * Checked: an error always comes with a message; a loaded site has its pages sorted
 * and each found by its own path; site_finish renders every page (when the generated
 * parts are small enough not to stall the fuzzer), expanding every {base}.
 */
#include "fuzz_common.h"

#include "site.h"

#define BASE          "http://127.0.0.1:8080"
#define MAX_GENERATED 20000 /* links= and nest= summed over the site */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    err[0] = '\0';
    site *s = site_parse_buffer("fuzz.site", (const char *)data, size, NULL, err, sizeof err);
    if (!s) {
        FUZZ_CHECK(err[0] != '\0' && memchr(err, '\0', sizeof err));
        return 0;
    }
    FUZZ_CHECK(s->npages > 0);
    long long generated = 0;
    for (size_t i = 0; i < s->npages; i++) {
        const site_page *pg = s->pages[i];
        FUZZ_CHECK(pg->path && pg->path[0] == '/');
        FUZZ_CHECK(pg->status >= 100 && pg->status <= 999);
        if (i > 0)
            FUZZ_CHECK(strcmp(s->pages[i - 1]->path, pg->path) < 0);
        FUZZ_CHECK(site_find(s, pg->path) == pg);
        FUZZ_CHECK(site_reason(pg->status) != NULL);
        generated += pg->gen_links + pg->nest;
    }
    if (generated <= MAX_GENERATED) {
        site_finish(s, BASE);
        for (size_t i = 0; i < s->npages; i++) {
            const site_page *pg = s->pages[i];
            if (pg->kind != BODY_BYTES)
                FUZZ_CHECK(pg->body != NULL);
            if (pg->body) {
                FUZZ_CHECK(pg->body[pg->body_len] == '\0');
                FUZZ_CHECK(!memmem(pg->body, pg->body_len, "{base}", 6));
            }
            FUZZ_CHECK(!pg->location || !strstr(pg->location, "{base}"));
            for (size_t h = 0; h < pg->nheaders; h++)
                FUZZ_CHECK(!strstr(pg->headers[h], "{base}"));
        }
    }
    site_free(s);
    return 0;
}
