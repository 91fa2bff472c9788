/* libmem.h — libcurl and libxml2 allocate through alloc.h.
 *
 * Left to themselves, both libraries turn a failed allocation into an error code —
 * CURLE_OUT_OF_MEMORY, CURLUE_OUT_OF_MEMORY, a NULL parser context, a parse that just
 * stops — which the crawl would read as a failed fetch, a URL that does not parse or a
 * page without links: running out of memory would look like an ordinary crawl. Given
 * alloc.h's functions instead (curl_global_init_mem, xmlMemSetup), they never see a
 * failed allocation: the process ends as it does when ours fail.
 *
 * So what libcurl 7.88 still calls "out of memory" afterwards is one of its size
 * limits (a response header over 100 KB, a URL grown past 8 MB): the server's doing,
 * reported as a failed fetch or a bad URL, not an abort.
 *
 * The modules that use either library call libmem_init before their first use
 * (url.c, links.c, curlglue.c); it runs once per process, thread-safe.
 */
#ifndef CRAWL_LIBMEM_H
#define CRAWL_LIBMEM_H

/* NULL, or libcurl's reason why curl_global_init failed (libcurl is unusable then). */
const char *libmem_init(void);

#endif
