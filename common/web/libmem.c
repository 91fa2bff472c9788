/* libmem.c — see libmem.h. */
#include "libmem.h"

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/xmlmemory.h>
#include <pthread.h>
#include <stdlib.h>

#include "alloc.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode curl_rc;

static void init(void)
{
    /* Before either library allocates anything: libxml2 before xmlInitParser, libcurl
     * before curl_global_init (which it would otherwise be). Never cleaned up: the
     * process keeps both for its whole life. */
    xmlMemSetup(free, xmalloc, xrealloc, xstrdup);
    xmlInitParser();
    curl_rc = curl_global_init_mem(CURL_GLOBAL_DEFAULT, xmalloc, free, xrealloc, xstrdup, xcalloc);
}

const char *libmem_init(void)
{
    pthread_once(&once, init);
    return curl_rc == CURLE_OK ? NULL : curl_easy_strerror(curl_rc);
}
