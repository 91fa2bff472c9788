/* cli.h — the command line shared by crawl-callbacks, crawl-generators and crawl-queue.
 *
 *   PROG [options] ROOT...
 * Exit codes: 0 the crawl completed (failed fetches are records in the report),
 * 1 a fatal error, 2 bad usage (one line on stderr naming the bad argument).
 */
#ifndef CRAWL_CLI_H
#define CRAWL_CLI_H

#include "options.h"

enum { CLI_OK = 0, CLI_EXIT_OK = -1, CLI_USAGE = 2 };

/* Which crawler is parsing: the stage-3 options (the engine's: robots.txt, storage,
 * politeness, ...) are accepted by crawl-queue only; stages 1 and 2 keep the chapter's
 * crawler and refuse them with one line. */
typedef enum { CLI_CHAPTER = 0, CLI_STAGE3 = 1 } cli_stage;

/* Parse argv. prog names the program in messages; default_transport is the stage's.
 * Returns CLI_OK, CLI_EXIT_OK (help or version was printed: exit 0) or CLI_USAGE
 * (one line was printed on stderr: exit 2). Roots are checked here: each must be
 * accepted by url_fix. */
int cli_parse(crawl_options *o, int argc, char **argv, const char *prog,
              const char *default_transport, cli_stage stage);

#endif
