/* fetcher_curl.c — the stage 1 Fetcher over libcurl (--transport curl): one transfer
 * and one callback where the raw Fetcher (fetcher.c) has a socket and two. libcurl
 * connects, sends and reads on the same event loop; the body goes to the crawl core's
 * sink as it comes, so only the end of the transfer is ours to handle. */
#include "fetcher.h"

static void response_done(void *data, const char *error);

/* One try: hand the URL to libcurl. 0 when the transfer runs, -1 when it could not
 * start (the try has failed, for fetch's loop). */
int fetcher_start_curl(Fetcher *f)
{
    f->req = curl_glue_get(f->a->curl, f->url, NULL, app_timeout_ms(f->a), f->a->opt.max_size,
                           crawl_fetch_sink(f->response), response_done, f);
    return f->req ? 0 : fetcher_fail_now(f, "could not start the transfer");
}

/* The transfer ended: succeeded (whole, or cut at --max-size) or failed. */
static void response_done(void *data, const char *error)
{
    Fetcher *f = data;
    f->req = NULL; /* the glue frees it when we return */
    if (!error)
        fetcher_succeeded(f, false);
    else if (error == curl_glue_truncated)
        fetcher_succeeded(f, true);
    else
        fetcher_fail(f, error);
}
