/* pattern.c — user regexes on PCRE2, with limits on memory and time (pattern.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "pattern.h"

#include "alloc.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PCRE2's own limits on a match, behind the step budget. */
#define MATCH_LIMIT    1000000 /* backtracking points (pcre2_set_match_limit) */
#define DEPTH_LIMIT    10000   /* nested backtracking (interpreter only) */
#define HEAP_LIMIT_KIB 1024    /* the interpreter's backtracking frames */

/* The bytes one pattern's compilation holds: each block carries its size in front. */
typedef struct budget {
    atomic_size_t used;
    size_t cap;
    atomic_bool refused; /* a request was over the cap */
} budget;

struct pattern {
    budget mem; /* first: the compiled code's allocator refers to it until the end */
    pcre2_code *code;
    bool jit;
    atomic_bool limited; /* a match of it has reached a limit */
};

typedef union block_head {
    size_t size;
    max_align_t align;
} block_head;

static void *capped_malloc(PCRE2_SIZE size, void *data)
{
    budget *b = data;
    size_t total = size + sizeof(block_head);
    if (total < size)
        return NULL;
    size_t was = atomic_fetch_add(&b->used, total);
    if (was + total > b->cap || was + total < was) {
        atomic_fetch_sub(&b->used, total);
        atomic_store(&b->refused, true);
        return NULL; /* PCRE2 reports it: "failed to allocate heap memory" */
    }
    block_head *h = xmalloc(total);
    h->size = total;
    return h + 1;
}

static void capped_free(void *p, void *data)
{
    if (!p)
        return;
    block_head *h = (block_head *)p - 1;
    atomic_fetch_sub(&((budget *)data)->used, h->size);
    free(h);
}

/* Matching allocates match data and contexts (and the interpreter's frames) through
 * alloc.h: out of memory ends the process, as everywhere else, rather than looking like
 * a URL that does not match. */
static void *plain_malloc(PCRE2_SIZE size, void *data)
{
    (void)data;
    return xmalloc(size ? size : 1);
}

static void plain_free(void *p, void *data)
{
    (void)data;
    free(p);
}

static pcre2_general_context *plain_context;
static uint32_t have_jit;
static pthread_once_t plain_once = PTHREAD_ONCE_INIT;

static void plain_init(void)
{
    plain_context = pcre2_general_context_create(plain_malloc, plain_free, NULL);
    if (!plain_context)
        alloc_oom(0);
    if (pcre2_config(PCRE2_CONFIG_JIT, &have_jit) < 0)
        have_jit = 0;
}

/* ---- the refusals: a scan of the text ---- */

/* A repeat count at s, "{m}", "{m,}" or "{m,n}" (PCRE2 10.42's), or "{,n}" and the
 * same with spaces inside (later PCRE2's; literals to 10.42, read as counts here all the
 * same, so that no version's count escapes the bound): its length, with its largest
 * number in *max; 0 when s is a literal "{". */
static size_t repeat_count(const char *s, unsigned long *max)
{
    size_t i = 1;
    unsigned long top = 0;
    int numbers = 0, commas = 0;
    for (;;) {
        while (s[i] == ' ')
            i++;
        if (s[i] >= '0' && s[i] <= '9') {
            unsigned long v = 0;
            while (s[i] >= '0' && s[i] <= '9') {
                if (v < 1000000)
                    v = v * 10 + (unsigned long)(s[i] - '0');
                i++;
            }
            numbers++;
            if (v > top)
                top = v;
            continue;
        }
        if (s[i] == ',' && commas == 0) {
            commas++;
            i++;
            continue;
        }
        if (s[i] == '}' && numbers > 0 && numbers <= commas + 1)
            break;
        return 0;
    }
    *max = top;
    return i + 1;
}

/* A flag setting after "(?": letters of "imns" and "-", then ")" or ":". */
static bool flag_group(const char *s)
{
    size_t n = strspn(s, "imns-");
    return n > 0 && (s[n] == ')' || s[n] == ':');
}

static bool refuse(char *why, size_t whylen, size_t at, const char *what)
{
    snprintf(why, whylen, "%s at offset %zu", what, at);
    return false;
}

/* Whether src holds none of the constructs pattern.h lists as refused. */
static bool scan(const char *src, char *why, size_t whylen)
{
    bool in_class = false;
    size_t class_start = 0;
    for (size_t i = 0; src[i];) {
        char c = src[i];
        if (c == '\\') {
            char d = src[i + 1];
            if (d == 'Q' || d == 'E')
                return refuse(why, whylen, i, "\\Q...\\E quoting is refused");
            if (d == 'C')
                return refuse(why, whylen, i, "\\C is refused");
            if (!in_class) {
                if (d >= '1' && d <= '9')
                    return refuse(why, whylen, i, "back-references are refused");
                if (d == 'g' || d == 'k')
                    return refuse(why, whylen, i,
                                  "back-references and subroutine calls are refused");
                if (d == 'K')
                    return refuse(why, whylen, i, "\\K is refused");
            }
            if (src[i + 2] == '{' && d && strchr("xopPN", d)) {
                /* \x{HH}, \o{OOO}, \p{Name}: braces that hold no repeat count */
                const char *close = strchr(src + i + 2, '}');
                i = close ? (size_t)(close - src) + 1 : i + 2;
                continue;
            }
            i += d ? 2 : 1;
            continue;
        }
        if (in_class) {
            if (c == '[' && (src[i + 1] == ':' || src[i + 1] == '.' || src[i + 1] == '=')) {
                char end[3] = {src[i + 1], ']', '\0'};
                const char *close = strstr(src + i + 2, end);
                if (close) {
                    i = (size_t)(close - src) + 2;
                    continue;
                }
            } else if (c == ']' && i > class_start) {
                in_class = false;
            }
            i++;
            continue;
        }
        size_t quantifier = 0;
        unsigned long count = 0;
        switch (c) {
        case '[':
            in_class = true;
            i++;
            if (src[i] == '^')
                i++;
            class_start = i; /* a "]" here is a member */
            continue;
        case '(':
            if (src[i + 1] == '*')
                return refuse(why, whylen, i, "\"(*\" verbs and options are refused");
            if (src[i + 1] == '?' && src[i + 2] != ':' && !flag_group(src + i + 2))
                return refuse(why, whylen, i,
                              "lookarounds, atomic, named and other \"(?\" groups are refused"
                              " (\"(?:\" and flags like \"(?i)\" are accepted)");
            i += src[i + 1] == '?' ? 2 : 1;
            continue;
        case '*':
        case '+':
        case '?': quantifier = 1; break;
        case '{':
            quantifier = repeat_count(src + i, &count);
            if (quantifier > 0 && count > PATTERN_MAX_REPEAT) {
                char what[96];
                snprintf(what, sizeof what, "a repeat count above %d is refused",
                         PATTERN_MAX_REPEAT);
                return refuse(why, whylen, i, what);
            }
            break;
        default: break;
        }
        if (quantifier == 0) {
            i++;
            continue;
        }
        i += quantifier;
        if (src[i] == '+')
            return refuse(why, whylen, i - 1, "possessive quantifiers are refused");
        if (src[i] == '?')
            i++; /* lazy */
    }
    return true;
}

/* ---- compile and match ---- */

pattern *pattern_compile_capped(const char *src, size_t max_bytes, char *why, size_t whylen)
{
    pthread_once(&plain_once, plain_init);
    if (whylen > 0)
        why[0] = '\0';
    size_t len = strlen(src);
    if (len > PATTERN_MAX_LENGTH) {
        snprintf(why, whylen, "longer than %d bytes", PATTERN_MAX_LENGTH);
        return NULL;
    }
    if (!scan(src, why, whylen))
        return NULL;
    pattern *p = xcalloc(1, sizeof *p);
    atomic_init(&p->mem.used, 0);
    atomic_init(&p->mem.refused, false);
    atomic_init(&p->limited, false);
    p->mem.cap = max_bytes;
    pcre2_general_context *gc = pcre2_general_context_create(capped_malloc, capped_free, &p->mem);
    pcre2_compile_context *cc = gc ? pcre2_compile_context_create(gc) : NULL;
    int err = 0;
    PCRE2_SIZE off = 0;
    if (cc) {
        pcre2_set_max_pattern_length(cc, PATTERN_MAX_LENGTH);
        /* A callout before every item counts the steps of a match (pattern.h); with the
         * repeats left unpossessed, every character a repeat takes is given back through
         * a callout when it fails, so none goes uncounted. */
        p->code = pcre2_compile((PCRE2_SPTR)src, len, PCRE2_AUTO_CALLOUT | PCRE2_NO_AUTO_POSSESS,
                                &err, &off, cc);
    }
    pcre2_compile_context_free(cc);
    pcre2_general_context_free(gc);
    if (!p->code) {
        if (!cc || atomic_load(&p->mem.refused)) {
            snprintf(why, whylen, "needs more than %zu bytes to compile", max_bytes);
        } else {
            PCRE2_UCHAR msg[160];
            if (pcre2_get_error_message(err, msg, sizeof msg) < 0)
                snprintf((char *)msg, sizeof msg, "error %d", err);
            snprintf(why, whylen, "%s at offset %zu", (const char *)msg, (size_t)off);
        }
        pattern_free(p);
        return NULL;
    }
    uint32_t backrefs = 0, backslash_c = 0;
    pcre2_pattern_info(p->code, PCRE2_INFO_BACKREFMAX, &backrefs);
    pcre2_pattern_info(p->code, PCRE2_INFO_HASBACKSLASHC, &backslash_c);
    if (backrefs > 0 || backslash_c) {
        snprintf(why, whylen, "%s are refused", backrefs ? "back-references" : "\\C");
        pattern_free(p);
        return NULL;
    }
    if (have_jit) {
        /* Its work memory comes from the same capped allocator; its executable memory
         * is mapped apart. Over the cap: refused, rather than matched the slow way. */
        int rc = pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE);
        if (rc != 0 && atomic_load(&p->mem.refused)) {
            snprintf(why, whylen, "needs more than %zu bytes to compile", max_bytes);
            pattern_free(p);
            return NULL;
        }
        p->jit = rc == 0;
    }
    return p;
}

pattern *pattern_compile(const char *src, char *why, size_t whylen)
{
    return pattern_compile_capped(src, PATTERN_MAX_BYTES, why, whylen);
}

/* The automatic callout before each item: one step. Past the budget, the match stops
 * with an error of its own (a callout's negative return ends pcre2_match with it). */
static int count_step(pcre2_callout_block *block, void *data)
{
    (void)block;
    unsigned long *steps = data;
    return ++*steps > PATTERN_MATCH_STEPS ? PCRE2_ERROR_CALLOUT : 0;
}

int pattern_match(const pattern *p, const char *subject)
{
    unsigned long steps = 0;
    pcre2_match_context *mc = pcre2_match_context_create(plain_context);
    pcre2_match_data *md = pcre2_match_data_create(1, plain_context);
    if (!mc || !md)
        alloc_oom(0);
    pcre2_set_match_limit(mc, MATCH_LIMIT);
    pcre2_set_depth_limit(mc, DEPTH_LIMIT);
    pcre2_set_heap_limit(mc, HEAP_LIMIT_KIB);
    pcre2_set_callout(mc, count_step, &steps);
    int rc = pcre2_match(p->code, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md, mc);
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    if (rc >= 0)
        return PATTERN_MATCH;
    if (rc == PCRE2_ERROR_NOMATCH)
        return PATTERN_NO_MATCH;
    /* the step budget (PCRE2_ERROR_CALLOUT), PCRE2's match, depth or heap limit, the JIT
     * stack (PCRE2_ERROR_JIT_STACKLIMIT), no memory for the JIT stack: the answer is
     * unknown (an allocation of ours that fails ends the process: alloc.h) */
    return PATTERN_LIMIT;
}

bool pattern_first_limit(pattern *p)
{
    return !atomic_exchange(&p->limited, true);
}

bool pattern_jit(const pattern *p)
{
    return p->jit;
}

void pattern_free(pattern *p)
{
    if (!p)
        return;
    pcre2_code_free(p->code);
    free(p);
}

int pattern_check(const char *flag, const char *src, char *why, size_t whylen)
{
    char err[256];
    pattern *re = pattern_compile(src, err, sizeof err);
    if (re) {
        pattern_free(re);
        return 0;
    }
    snprintf(why, whylen, "%s: bad regex '%s': %s", flag, src, err);
    return -1;
}
