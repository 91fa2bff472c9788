/* similarity_dave.c — for tests/exercise/similarity_test.sh: a read_response of
 * another shape than ours (a loop, other names, another order of tests), which the
 * similarity table must not pair with ours. Not built: a region for a copy. */
static void read_response(selector *s, int fd, int events, void *data)
{
    Fetcher *me = data;
    static char in[NET_READ_CHUNK];
    (void)s;
    (void)events;
    for (;;) {
        ssize_t len = recv(fd, in, sizeof in, 0);
        if (len < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (len < 0) {
            char msg[128];
            fetcher_fail(me, raw_error(msg, sizeof msg, "recv", errno));
            return;
        }
        int done =
            len == 0 ? http_parser_eof(me->parser) : http_parser_feed(me->parser, in, (size_t)len);
        if (crawl_fetch_full(me->response)) {
            fetcher_succeeded(me, true);
        } else if (done == -1) {
            fetcher_fail(me, http_parser_error(me->parser));
        } else if (done == 1 || len == 0) {
            fetcher_succeeded(me, false);
        }
        return;
    }
}
