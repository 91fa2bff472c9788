/* xpath.c — libxml2's HTML parse and XPath for spiders (xpath.h). */
#include "xpath.h"

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

struct xpath_doc {
    htmlDocPtr doc;
    xmlXPathContextPtr ctx;
    unsigned long ops; /* the last evaluation's operations */
};

/* libxml2 reports XPath errors through the process-wide handlers: kept here for err
 * instead of printed (the loop thread is the only one that evaluates). */
static char last_error[256];

static void keep_error(void *ctx, const xmlError *e)
{
    (void)ctx;
    if (e && e->message && !last_error[0]) {
        snprintf(last_error, sizeof last_error, "%s", e->message);
        size_t n = strlen(last_error);
        while (n > 0 && (last_error[n - 1] == '\n' || last_error[n - 1] == ' '))
            last_error[--n] = '\0';
    }
}

static void quiet(void)
{
    last_error[0] = '\0';
    xmlSetStructuredErrorFunc(NULL, (xmlStructuredErrorFunc)keep_error);
}

static void add_cmp_fns(xmlXPathContextPtr ctx);

xpath_doc *xpath_parse(const char *body, size_t len, const char *charset, const char *url)
{
    xpath_doc *d = xcalloc(1, sizeof *d);
    quiet();
    if (len > 0 && len <= (size_t)INT32_MAX)
        d->doc = htmlReadMemory(body, (int)len, url, charset,
                                HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING
                                    | HTML_PARSE_NONET | HTML_PARSE_COMPACT);
    if (!d->doc)
        d->doc = htmlNewDocNoDtD(NULL, NULL);
    if (!d->doc || !(d->ctx = xmlXPathNewContext(d->doc)))
        alloc_oom(0);
    add_cmp_fns(d->ctx);
    return d;
}

void xpath_doc_free(xpath_doc *d)
{
    if (!d)
        return;
    xmlXPathFreeContext(d->ctx);
    xmlFreeDoc(d->doc);
    free(d);
}

static void say(const char *expr, char *err, size_t errlen)
{
    snprintf(err, errlen, "bad XPath '%s': %s", expr,
             last_error[0] ? last_error : "it does not compile");
}

/* XPath 1.0's core function library (XPath 1.0, section 4): the only functions an
 * expression may call. libxml2 knows more (and a lookup could add others); an unknown
 * one is an error only when evaluated, so this is checked before. */
static const char *const core[] = {
    "last",
    "position",
    "count",
    "id",
    "local-name",
    "namespace-uri",
    "name",
    "string",
    "concat",
    "starts-with",
    "contains",
    "substring-before",
    "substring-after",
    "substring",
    "string-length",
    "normalize-space",
    "translate",
    "boolean",
    "not",
    "true",
    "false",
    "lang",
    "number",
    "sum",
    "floor",
    "ceiling",
    "round",
};
static const char *const node_types[] = {"comment", "text", "processing-instruction", "node"};

static bool in_list(const char *const *list, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && strncmp(list[i], s, len) == 0)
            return true;
    return false;
}

static bool name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool name_char(unsigned char c)
{
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* The tokens the comparison rewrite (below) needs told apart; the rest are T_OTHER. */
typedef enum {
    T_OTHER,
    T_LITERAL, /* a string or a number */
    T_CALL,    /* the name of a core function, its '(' next */
    T_OR,
    T_AND,
    T_EQ, /* = != */
    T_NE,
    T_LT, /* < <= > >= */
    T_LE,
    T_GT,
    T_GE,
    T_OPEN, /* ( [ */
    T_CLOSE,
    T_COMMA,
} tok_kind;

typedef struct tok {
    tok_kind kind;
    size_t start, end; /* in the expression */
} tok;

typedef struct toks {
    tok *v;
    size_t n, cap;
} toks;

static void add_tok(toks *t, tok_kind kind, const char *expr, const char *from, const char *to)
{
    if (!t)
        return;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        t->v = xreallocarray(t->v, t->cap, sizeof *t->v);
    }
    t->v[t->n++] = (tok){kind, (size_t)(from - expr), (size_t)(to - expr)};
}

/* XPath 1.0's lexical rules (section 3.7) over expr, for what libxml2's compiler lets
 * through: a call of a function outside the core library, and brackets left open
 * (libxml2 2.9 compiles "count(" without a word). after_operand: the token before may
 * end an operand, so that a name is an operator (and, or, div, mod) and * multiplies. */
static int check_tokens(const char *expr, toks *t, char *err, size_t errlen)
{
    const char *p = expr;
    bool after_operand = false;
    int depth = 0;
    while (*p) {
        unsigned char c = (unsigned char)*p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            p++;
        } else if (c == '"' || c == '\'') {
            const char *end = strchr(p + 1, c);
            if (!end)
                return 0; /* the compiler says so */
            add_tok(t, T_LITERAL, expr, p, end + 1);
            p = end + 1;
            after_operand = true;
        } else if ((c >= '0' && c <= '9') || (c == '.' && p[1] >= '0' && p[1] <= '9')) {
            const char *from = p;
            while ((*p >= '0' && *p <= '9') || *p == '.')
                p++;
            add_tok(t, T_LITERAL, expr, from, p);
            after_operand = true;
        } else if (c == '$') {
            const char *from = p;
            for (p++; name_char((unsigned char)*p) || *p == ':'; p++)
                ;
            add_tok(t, T_OTHER, expr, from, p);
            after_operand = true;
        } else if (name_start(c)) {
            const char *name = p;
            while (name_char((unsigned char)*p))
                p++;
            if (*p == ':' && p[1] == '*') { /* prefix:* */
                p += 2;
                add_tok(t, T_OTHER, expr, name, p);
                after_operand = true;
                continue;
            }
            if (*p == ':' && p[1] != ':')
                for (p++; name_char((unsigned char)*p); p++)
                    ;
            size_t len = (size_t)(p - name);
            if (after_operand) { /* an operator name */
                add_tok(t,
                        len == 2 && strncmp(name, "or", 2) == 0        ? T_OR
                            : len == 3 && strncmp(name, "and", 3) == 0 ? T_AND
                                                                       : T_OTHER,
                        expr, name, p);
                after_operand = false;
                continue;
            }
            const char *q = p;
            while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
                q++;
            if (*q == '(' && !in_list(node_types, 4, name, len)
                && !in_list(core, sizeof core / sizeof *core, name, len)) {
                snprintf(err, errlen,
                         "bad XPath '%s': %.*s() is not a function of XPath 1.0's core library",
                         expr, (int)len, name);
                return -1;
            }
            add_tok(t, *q == '(' && !in_list(node_types, 4, name, len) ? T_CALL : T_OTHER, expr,
                    name, p);
            /* a function or node type (its '(' follows), an axis (its '::'), or a name
             * test */
            after_operand = *q != '(' && !(q[0] == ':' && q[1] == ':');
        } else if (c == '*') {
            add_tok(t, T_OTHER, expr, p, p + 1);
            p++;
            after_operand = !after_operand; /* multiply, or the name test * */
        } else if (c == ')' || c == ']') {
            if (--depth < 0)
                return 0; /* the compiler says so */
            add_tok(t, T_CLOSE, expr, p, p + 1);
            p++;
            after_operand = true;
        } else if (c == '.') {
            add_tok(t, T_OTHER, expr, p, p + (p[1] == '.' ? 2 : 1));
            p += p[1] == '.' ? 2 : 1;
            after_operand = true;
        } else {
            if (c == '(' || c == '[')
                depth++;
            size_t n = (c == '/' && p[1] == '/') || (c == ':' && p[1] == ':')
                    || ((c == '!' || c == '<' || c == '>') && p[1] == '=')
                ? 2
                : 1;
            bool eq = n == 2 && p[1] == '=';
            add_tok(t,
                    c == '(' || c == '[' ? T_OPEN
                        : c == ','       ? T_COMMA
                        : c == '='       ? T_EQ
                        : c == '!' && eq ? T_NE
                        : c == '<'       ? (eq ? T_LE : T_LT)
                        : c == '>'       ? (eq ? T_GE : T_GT)
                                         : T_OTHER,
                    expr, p, p + n);
            p += n;
            after_operand = false;
        }
    }
    if (depth > 0) {
        snprintf(err, errlen, "bad XPath '%s': a '(' or '[' is not closed", expr);
        return -1;
    }
    return 0;
}

/* Comparisons between two node-sets: libxml2 compares every pair (xmlXPathEqualNodeSets,
 * xmlXPathCompareNodeSets) and counts none of them against opLimit, so that
 * "//span != //span" on 20,000 spans is 400 million string comparisons (2 s of a core)
 * for 80,000 counted operations, and a predicate repeats it at will. So every comparison
 * whose two operands may be node-sets is evaluated by one of these functions instead (the
 * expression rewritten: "A = B" becomes "crawl-eq(A, B)", same context, same operands):
 * it charges the pairs, |A| x |B|, to the operations before libxml2 compares them, and
 * fails as opLimit does when they are over. The names cannot be called by a spider:
 * xpath_check refuses every function outside the core library before the rewrite. */
typedef struct cmp_fn {
    const char *name;
    tok_kind op;
} cmp_fn;
static const cmp_fn cmp_fns[] = {{"crawl-eq", T_EQ}, {"crawl-ne", T_NE}, {"crawl-lt", T_LT},
                                 {"crawl-le", T_LE}, {"crawl-gt", T_GT}, {"crawl-ge", T_GE}};

static unsigned long size_of(const xmlXPathObject *o)
{
    if (o && (o->type == XPATH_NODESET || o->type == XPATH_XSLT_TREE) && o->nodesetval
        && o->nodesetval->nodeNr > 0)
        return (unsigned long)o->nodesetval->nodeNr;
    return 1;
}

static void compare(xmlXPathParserContextPtr ctxt, int nargs, tok_kind op)
{
    CHECK_ARITY(2);
    xmlXPathContextPtr x = ctxt->context;
    unsigned long n = size_of(ctxt->valueTab[ctxt->valueNr - 2]);
    unsigned long m = size_of(ctxt->valueTab[ctxt->valueNr - 1]);
    unsigned long left = x->opLimit > x->opCount ? x->opLimit - x->opCount : 0;
    if (x->opLimit && (n > left / m)) { /* n x m > left, without overflow */
        x->opCount = x->opLimit;
        XP_ERROR(XPATH_OP_LIMIT_EXCEEDED);
    }
    x->opCount += n * m;
    int r = op == T_EQ ? xmlXPathEqualValues(ctxt)
        : op == T_NE
        ? xmlXPathNotEqualValues(ctxt)
        : xmlXPathCompareValues(ctxt, op == T_LT || op == T_LE, op == T_LT || op == T_GT);
    valuePush(ctxt, xmlXPathNewBoolean(r));
}

#define CMP_FN(name, op)                                                                           \
    static void name(xmlXPathParserContextPtr ctxt, int nargs)                                     \
    {                                                                                              \
        compare(ctxt, nargs, op);                                                                  \
    }
CMP_FN(cmp_eq, T_EQ)
CMP_FN(cmp_ne, T_NE)
CMP_FN(cmp_lt, T_LT)
CMP_FN(cmp_le, T_LE)
CMP_FN(cmp_gt, T_GT)
CMP_FN(cmp_ge, T_GE)
static const xmlXPathFunction cmp_impl[] = {cmp_eq, cmp_ne, cmp_lt, cmp_le, cmp_gt, cmp_ge};

static void add_cmp_fns(xmlXPathContextPtr ctx)
{
    for (size_t i = 0; i < sizeof cmp_fns / sizeof *cmp_fns; i++)
        if (xmlXPathRegisterFunc(ctx, (const xmlChar *)cmp_fns[i].name, cmp_impl[i]) < 0)
            alloc_oom(0);
}

typedef struct out {
    const char *expr;
    const toks *t;
    size_t *match; /* the index of each bracket's other one */
    char *buf;
    size_t len, cap;
} out;

static void put(out *o, const char *s, size_t n)
{
    xappend(&o->buf, &o->len, &o->cap, s, n);
}

static void put_tok(out *o, size_t i)
{
    put(o, o->expr + o->t->v[i].start, o->t->v[i].end - o->t->v[i].start);
}

static void put_expr(out *o, size_t lo, size_t hi);

/* Tokens lo..hi, none of or/and/comparisons outside brackets: as written, with what is
 * inside each bracket rewritten (a function's arguments one by one). */
static void put_plain(out *o, size_t lo, size_t hi)
{
    if (lo >= hi)
        return;
    size_t cur = o->t->v[lo].start;
    for (size_t i = lo; i < hi; i++) {
        if (o->t->v[i].kind != T_OPEN)
            continue;
        put(o, o->expr + cur, o->t->v[i].end - cur);
        size_t j = o->match[i], from = i + 1;
        for (size_t k = i + 1; k <= j; k++) {
            if (k < j && o->t->v[k].kind == T_OPEN) {
                k = o->match[k];
            } else if (k == j || o->t->v[k].kind == T_COMMA) {
                put_expr(o, from, k);
                if (k < j)
                    put_tok(o, k);
                from = k + 1;
            }
        }
        cur = o->t->v[j].start;
        i = j;
    }
    put(o, o->expr + cur, o->t->v[hi - 1].end - cur);
}

/* Whether tokens lo..hi may give a node-set: not a literal, a call of a core function but
 * id() (the whole operand), or a comparison (a boolean). */
static bool may_be_nodes(const out *o, size_t lo, size_t hi)
{
    const tok *v = o->t->v;
    if (lo >= hi)
        return false;
    if (hi == lo + 1 && v[lo].kind == T_LITERAL)
        return false;
    if (v[lo].kind == T_CALL && lo + 1 < hi && o->match[lo + 1] == hi - 1
        && !(v[lo].end - v[lo].start == 2 && strncmp(o->expr + v[lo].start, "id", 2) == 0))
        return false;
    for (size_t i = lo; i < hi; i++) {
        if (v[i].kind == T_OPEN)
            i = o->match[i];
        else if (v[i].kind >= T_LT && v[i].kind <= T_GE)
            return false;
    }
    return true;
}

/* The first operator of first..last (a level's) in tokens i..hi outside brackets, or hi. */
static size_t next_op(const out *o, size_t i, size_t hi, tok_kind first, tok_kind last)
{
    for (; i < hi; i++) {
        if (o->t->v[i].kind == T_OPEN)
            i = o->match[i];
        else if (o->t->v[i].kind >= first && o->t->v[i].kind <= last)
            return i;
    }
    return hi;
}

static void put_level(out *o, size_t lo, size_t hi, tok_kind level);

/* Tokens lo..hi at the level below level. */
static void put_below(out *o, size_t lo, size_t hi, tok_kind level)
{
    if (level == T_LT)
        put_plain(o, lo, hi);
    else
        put_level(o, lo, hi, level == T_OR ? T_EQ : T_LT);
}

/* Tokens lo..hi at one level of XPath's grammar: split at its operators outside brackets
 * (or and and: T_OR; = and !=: T_EQ; the relations: T_LT), each part at the next level;
 * the first comparison, if its two parts may be node-sets, becomes a crawl-* call (the
 * others compare a boolean, the one before, with a part: linear). */
static void put_level(out *o, size_t lo, size_t hi, tok_kind level)
{
    tok_kind first = level, last = level == T_OR ? T_AND : level == T_EQ ? T_NE : T_GE;
    size_t op0 = next_op(o, lo, hi, first, last);
    if (op0 == hi) {
        put_below(o, lo, hi, level);
        return;
    }
    size_t end1 = next_op(o, op0 + 1, hi, first, last);
    bool wrap = level != T_OR && may_be_nodes(o, lo, op0) && may_be_nodes(o, op0 + 1, end1);
    if (wrap) {
        const char *name = cmp_fns[o->t->v[op0].kind - T_EQ].name;
        put(o, name, strlen(name));
        put(o, "(", 1);
    }
    put_below(o, lo, op0, level);
    for (size_t op = op0; op < hi;) {
        size_t to = next_op(o, op + 1, hi, first, last);
        if (op == op0 && wrap) {
            put(o, ", ", 2);
        } else {
            put(o, " ", 1);
            put_tok(o, op);
            put(o, " ", 1);
        }
        put_below(o, op + 1, to, level);
        if (op == op0 && wrap)
            put(o, ")", 1);
        op = to;
    }
}

static void put_expr(out *o, size_t lo, size_t hi)
{
    put_level(o, lo, hi, T_OR);
}

/* Brackets deeper than this are refused (libxml2 2.9 compiles about 450). */
#define MAX_NESTING 1024

/* expr (which xpath_check accepts) with its node-set comparisons as crawl-* calls: 0 and
 * a new string in *to (NULL when nothing changes), or -1 with err (nested too deep to
 * rewrite, so that nothing is evaluated unbounded). */
static int rewrite(const char *expr, char **to, char *err, size_t errlen)
{
    *to = NULL;
    toks t = {0};
    char why[8];
    if (check_tokens(expr, &t, why, sizeof why) < 0 || t.n == 0) {
        free(t.v);
        return 0;
    }
    bool any = false;
    for (size_t i = 0; i < t.n; i++)
        any |= t.v[i].kind >= T_EQ && t.v[i].kind <= T_GE;
    out o = {expr, &t, xcalloc(t.n, sizeof(size_t)), NULL, 0, 0};
    size_t stack[MAX_NESTING], depth = 0;
    int rc = 0;
    for (size_t i = 0; any && i < t.n; i++) {
        if (t.v[i].kind == T_OPEN) {
            if (depth == MAX_NESTING) {
                snprintf(err, errlen, "bad XPath '%.200s...': brackets nested over %d deep", expr,
                         MAX_NESTING);
                rc = -1;
                break;
            }
            stack[depth++] = i;
        } else if (t.v[i].kind == T_CLOSE && depth > 0) {
            o.match[stack[--depth]] = i;
            o.match[i] = stack[depth];
        }
    }
    if (rc == 0 && any && depth == 0) {
        put_expr(&o, 0, t.n);
        put(&o, "", 1);
        *to = o.buf;
    } else {
        free(o.buf);
    }
    free(o.match);
    free(t.v);
    return rc;
}

int xpath_check(const char *expr, char *err, size_t errlen)
{
    quiet();
    xmlXPathCompExprPtr c = xmlXPathCompile((const xmlChar *)expr);
    if (!c) {
        say(expr, err, errlen);
        return -1;
    }
    xmlXPathFreeCompExpr(c);
    return check_tokens(expr, NULL, err, errlen);
}

/* One string to fn: 1 when fn says stop. */
static int give(xmlChar *s, int (*fn)(void *, const char *, size_t), void *ctx)
{
    if (!s)
        alloc_oom(0);
    int stop = fn(ctx, (const char *)s, strlen((const char *)s));
    xmlFree(s);
    return stop;
}

unsigned long xpath_ops(const xpath_doc *d)
{
    return d->ops;
}

int xpath_eval(xpath_doc *d, const char *expr, int (*fn)(void *ctx, const char *s, size_t len),
               void *ctx, char *err, size_t errlen)
{
    d->ops = 0;
    if (xpath_check(expr, err, errlen) < 0)
        return -1;
    quiet();
    d->ctx->opLimit = XPATH_OP_LIMIT;
    d->ctx->opCount = 0;
    char *rewritten;
    if (rewrite(expr, &rewritten, err, errlen) < 0)
        return -1;
    xmlXPathObjectPtr r =
        xmlXPathEvalExpression((const xmlChar *)(rewritten ? rewritten : expr), d->ctx);
    free(rewritten);
    d->ops = d->ctx->opCount;
    if (!r) {
        if (d->ops >= XPATH_OP_LIMIT)
            snprintf(err, errlen, "XPath '%s' over its limit of %d operations", expr,
                     XPATH_OP_LIMIT);
        else
            say(expr, err, errlen);
        return -1;
    }
    if (r->type == XPATH_NODESET) {
        xmlNodeSetPtr ns = r->nodesetval;
        for (int i = 0; ns && i < ns->nodeNr; i++)
            if (give(xmlXPathCastNodeToString(ns->nodeTab[i]), fn, ctx))
                break;
    } else {
        give(xmlXPathCastToString(r), fn, ctx);
    }
    xmlXPathFreeObject(r);
    return 0;
}
