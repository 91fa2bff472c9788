/* read_response: the selector calls it each time the socket is readable (data, or
 * the peer closed). Write it, and any small helper it needs, between the EXERCISE
 * markers. The README beside this file (exercise-stage1-read_response/README.md)
 * says what it must do. */
static void read_response(selector *s, int fd, int events, void *data)
{
    (void)s, (void)fd, (void)events;
    Fetcher *f = data;
    /* TODO: read, feed the parser, then finish, fail, or wait for more. This stub
     * fails every try, so each URL ends as an error record. */
    fetcher_fail(f, "read_response is not written yet");
}
