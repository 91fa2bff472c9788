/* seen.h — a hash set of strings (the chapter's seen_urls): O(1) add and lookup, grows
 * as needed, no fixed capacity. The set keeps its own copies. */
#ifndef CRAWL_SEEN_H
#define CRAWL_SEEN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct seen_set seen_set;

seen_set *seen_new(void);
void seen_free(seen_set *s);
/* Returns true if s was not in the set (and is now), false if it was already there. */
bool seen_add(seen_set *s, const char *str);
bool seen_has(const seen_set *s, const char *str);
size_t seen_count(const seen_set *s);

#endif
