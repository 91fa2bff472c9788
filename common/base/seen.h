/* seen.h — a hash set of strings (the chapter's seen_urls): O(1) add and lookup, grows
 * as needed, no fixed capacity. The set keeps its own copies.
 *
 * Its strings come from web servers, so it hashes them with the keyed hash (hash.h):
 * a page cannot hold strings built to collide (hash flooding). seen_longest_probe
 * measures that. */
#ifndef CRAWL_SEEN_H
#define CRAWL_SEEN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct seen_set seen_set;

seen_set *seen_new(void);
void seen_free(seen_set *s);
/* Returns true if s was not in the set (and is now), false if it was already there. */
bool seen_add(seen_set *s, const char *str);
/* seen_add that also returns the set's copy of str (valid until seen_free), whether
 * it was added now (*added) or earlier. */
const char *seen_intern(seen_set *s, const char *str, bool *added);
bool seen_has(const seen_set *s, const char *str);
size_t seen_count(const seen_set *s);
/* The most slots a lookup of a string in the set looks at (0 when empty): a few, with
 * a good hash; about seen_count when the strings collide. */
size_t seen_longest_probe(const seen_set *s);

#endif
