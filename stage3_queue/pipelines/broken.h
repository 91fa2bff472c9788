/* broken.h — --fail-on-broken: a crawl that finds broken links fails, in wget's
 * numbers, so that a script or a CI job can tell (docs/extensions.md). An item
 * pipeline stage that reads every record:
 *
 *   4  some fetch failed on the network: no answer after every try (a refused
 *      connection, a timeout, a reset, a TLS failure), including a host whose
 *      robots.txt could not be fetched at all (its URLs are refused with
 *      "IgnoreRequest: host could not be reached") and one given up after back-offs
 *   8  some page answered 4xx or 5xx (and no fetch failed on the network: as wget,
 *      the lower number wins)
 *   0  every URL succeeded
 *
 * A URL robots.txt forbids, or that a middleware rescheduled, is not broken. At the
 * end (close) the first BROKEN_SHOWN failures go to stderr, each with the page that
 * linked to it (with --chapter, which keeps no referrer: the URL alone), then how many
 * more there were; the report holds them all. The status is the app's exit_status: a
 * fatal error (1) and bad usage (2) are unchanged.
 */
#ifndef CRAWL_BROKEN_H
#define CRAWL_BROKEN_H

#include "engine.h"

enum { BROKEN_SHOWN = 20, BROKEN_EXIT_NETWORK = 4, BROKEN_EXIT_SERVER = 8 };

item_pipeline broken_pipeline(void);

#endif
