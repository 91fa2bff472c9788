/* outclaim.h — the files a crawl will write, claimed before any of them is written, so
 * that a crawl that is refused (its state file holds another crawl, Redis says the
 * crawl has other roots, a second process names a file the first one writes) touches
 * no file.
 *
 *   outclaim *c = outclaim_new();
 *   outclaim_add(c, "--output", "x.jsonl", &size, err, sizeof err);   // each file
 *   ... every check of the crawl: a refusal frees c and leaves every file as it was ...
 *   outclaim_keep(c);           // the crawl begins: files are opened for writing now
 *   ... crawl ...
 *   outclaim_free(c);           // at the end of the process
 *
 * Claiming a file opens it without truncating it (a missing file is created, empty)
 * and takes flock(LOCK_EX | LOCK_NB) on it, held until outclaim_free: a second crawl
 * that names the same file, under any name (a link, "./x"), cannot claim it and says
 * so in one line ("--output 'x.jsonl' is in use by another crawl") without touching
 * it. flock locks are the open file's, apart from SQLite's own (fcntl) locks on the
 * same file; the claim's descriptor stays open until the process has closed SQLite.
 *
 * A FIFO is opened as outfile.h opens one: without a reader it is refused at once ("a
 * FIFO with no reader"), never waited for. Its descriptor stays open too, so that its
 * reader does not see the end of the stream before the crawl's own writer opens it.
 * Other files that are not regular (/dev/null, a terminal) are claimed without a lock.
 */
#ifndef CRAWL_OUTCLAIM_H
#define CRAWL_OUTCLAIM_H

#include <stddef.h>

typedef struct outclaim outclaim;

outclaim *outclaim_new(void);
/* Claim path; what names it in messages ("--output"). *size (may be NULL): the bytes
 * it holds now (0 for a file created here, or not regular). 0, or -1 with one line in
 * err. */
int outclaim_add(outclaim *c, const char *what, const char *path, long long *size, char *err,
                 size_t errlen);
/* The crawl begins: the files created by the claim are the crawl's now. */
void outclaim_keep(outclaim *c);
/* Release every lock and descriptor. Without outclaim_keep (the crawl was refused), a
 * file the claim created is removed again if it is still empty. NULL-safe. */
void outclaim_free(outclaim *c);

#endif
