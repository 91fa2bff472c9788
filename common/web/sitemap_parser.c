/* sitemap_parser.c — the sitemap parser; see sitemap_parser.h.
 *
 * The bytes go: gzip sniffing (the first two) -> zlib (http_inflate) when gzip -> the
 * byte limit -> sniffing the kind (the first non-blank byte) -> libxml2's SAX push
 * parser, in pieces of at most PUSH_MAX bytes, or the line splitter of text sitemaps.
 * Both end in the same place: a loc's text is collected (collect) and, at its end,
 * trimmed and delivered (deliver).
 */
#include "sitemap_parser.h"

#include "alloc.h"
#include "http_inflate.h"
#include "libmem.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* libxml2 gets at most this much at once (xmlParseChunk takes an int anyway). */
#define PUSH_MAX (64 * 1024)

typedef enum { KIND_UNKNOWN, KIND_XML, KIND_TEXT } file_kind;
typedef enum { ROOT_NONE, ROOT_URLSET, ROOT_INDEX } root_kind;

struct sitemap_parser {
    sitemap_limits lim;
    sitemap_loc_fn fn;
    void *ctx;
    size_t count; /* locs delivered */
    size_t bytes; /* after inflating, against lim.max_bytes */
    bool refused; /* feed returns -1 from now on */
    bool finished;
    char error[256]; /* the first reason, or "" */

    unsigned char magic[2]; /* the first bytes, until gzip or not is known */
    size_t nmagic;
    bool sniffed;     /* gzip or not is known */
    http_inflate *gz; /* NULL: not gzip */

    file_kind kind;

    /* the loc (or text line) being collected: at most lim.max_loc_len bytes kept,
     * leading blanks skipped; too_long once a non-blank byte went past that */
    char *text;
    size_t text_len;
    bool collecting;
    bool too_long;

    /* XML */
    xmlParserCtxtPtr ctxt;
    int depth; /* elements open, the root at 1 */
    root_kind root;
    bool in_entry; /* a <url> or <sitemap> at depth 2 is open */
    bool stop;     /* a callback refused the file: stop once libxml2 returns */

    /* text */
    bool url_line_seen;
};

void sitemap_default_limits(sitemap_limits *l)
{
    l->max_urls = SITEMAP_MAX_URLS;
    l->max_bytes = SITEMAP_MAX_BYTES;
    l->max_loc_len = SITEMAP_MAX_LOC;
    l->max_depth = SITEMAP_MAX_DEPTH;
}

/* The first reason wins; the file is refused. */
__attribute__((format(printf, 2, 3))) static void refuse(sitemap_parser *p, const char *fmt, ...)
{
    p->refused = true;
    if (p->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, ap);
    va_end(ap);
    for (char *c = p->error; *c; c++) /* one line, whatever libxml2 said */
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    size_t n = strlen(p->error);
    while (n > 0 && p->error[n - 1] == ' ')
        p->error[--n] = '\0';
}

/* ---- a loc's text ---------------------------------------------------------------- */

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void collect_start(sitemap_parser *p)
{
    p->collecting = true;
    p->text_len = 0;
    p->too_long = false;
}

static void collect(sitemap_parser *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p->text_len == 0 && blank(s[i]))
            continue;
        if (p->text_len < p->lim.max_loc_len)
            p->text[p->text_len++] = s[i];
        else if (!blank(s[i]))
            p->too_long = true;
    }
}

/* The loc collected, trimmed (NULL: empty or too long). */
static const char *collected(sitemap_parser *p)
{
    p->collecting = false;
    while (p->text_len > 0 && blank(p->text[p->text_len - 1]))
        p->text_len--;
    p->text[p->text_len] = '\0';
    return p->text_len == 0 || p->too_long ? NULL : p->text;
}

/* false: one too many, the file is refused. */
static bool deliver(sitemap_parser *p, sitemap_kind kind, const char *loc)
{
    if (p->count >= p->lim.max_urls) {
        refuse(p, "more than %zu URLs: the rest ignored", p->lim.max_urls);
        return false;
    }
    p->count++;
    p->fn(p->ctx, kind, loc);
    return true;
}

/* ---- XML: the SAX callbacks ------------------------------------------------------- */

/* libxml2 2.9's xmlStopParser frees the text being parsed, which the callback's caller
 * still reads: the callbacks stop the parse as later versions' xmlStopParser does,
 * with flags libxml2 checks after every callback, and push() calls xmlStopParser once
 * libxml2 returns. */
static void stop_sax(sitemap_parser *p)
{
    p->stop = true;
    p->ctxt->disableSAX = 1;
    p->ctxt->instate = XML_PARSER_EOF;
}

static bool named(const xmlChar *name, const char *want)
{
    return strcmp((const char *)name, want) == 0;
}

static void start_element(void *user, const xmlChar *localname, const xmlChar *prefix,
                          const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                          int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    (void)prefix, (void)uri, (void)nb_namespaces, (void)namespaces;
    (void)nb_attributes, (void)nb_defaulted, (void)attributes;
    sitemap_parser *p = user;
    if (p->stop)
        return;
    if (++p->depth > p->lim.max_depth) {
        refuse(p, "nesting deeper than %d", p->lim.max_depth);
        stop_sax(p);
        return;
    }
    if (p->depth == 1) {
        if (named(localname, "urlset")) {
            p->root = ROOT_URLSET;
        } else if (named(localname, "sitemapindex")) {
            p->root = ROOT_INDEX;
        } else {
            refuse(p, "root element is <%.64s>, not <urlset> or <sitemapindex>",
                   (const char *)localname);
            stop_sax(p);
        }
    } else if (p->depth == 2) {
        p->in_entry = named(localname, p->root == ROOT_URLSET ? "url" : "sitemap");
    } else if (p->depth == 3 && p->in_entry && named(localname, "loc")) {
        collect_start(p);
    }
}

static void end_element(void *user, const xmlChar *localname, const xmlChar *prefix,
                        const xmlChar *uri)
{
    (void)localname, (void)prefix, (void)uri;
    sitemap_parser *p = user;
    if (p->stop)
        return;
    if (p->depth == 3 && p->collecting) {
        const char *loc = collected(p);
        if (loc && !deliver(p, p->root == ROOT_URLSET ? SITEMAP_URL : SITEMAP_INDEX_ENTRY, loc))
            stop_sax(p);
    } else if (p->depth == 2) {
        p->in_entry = false;
    }
    p->depth--;
}

/* Text, whitespace and CDATA alike: only a <loc>'s own (not its children's) is kept. */
static void characters(void *user, const xmlChar *ch, int len)
{
    sitemap_parser *p = user;
    if (!p->stop && p->collecting && p->depth == 3 && len > 0)
        collect(p, (const char *)ch, (size_t)len);
}

/* The local name of the element after the last '<' libxml2 has read, or "" (when it
 * is not a start tag's): the root element a fatal error before the root was in. */
static void tag_at_error(const sitemap_parser *p, char *name, size_t size)
{
    xmlParserInputPtr in = p->ctxt->input;
    name[0] = '\0';
    if (!in || !in->base || !in->cur || !in->end || in->cur >= in->end)
        return;
    const xmlChar *lt = in->cur;
    while (lt > in->base && *lt != '<')
        lt--;
    if (*lt != '<' || !isalpha(lt[1]))
        return;
    size_t n = 0;
    for (const xmlChar *c = lt + 1; c < in->end && (isalnum(*c) || strchr("-_.:", *c)); c++) {
        if (*c == ':')
            n = 0; /* the local name */
        else if (n + 1 < size)
            name[n++] = (char)*c;
    }
    name[n] = '\0';
}

/* libxml2's errors and warnings (the SAX handler's serror): the first fatal one refuses
 * the file; the others (a namespace prefix never declared, say) change nothing. A fatal
 * error in the start tag of a root that is not ours (an HTML page's <html lang=en>) is
 * told as the wrong root it is. */
static void xml_error(void *user, xmlErrorPtr err)
{
    sitemap_parser *p = user;
    if (!err || err->level != XML_ERR_FATAL)
        return;
    char tag[65];
    if (p->root == ROOT_NONE && p->depth == 0) {
        tag_at_error(p, tag, sizeof tag);
        if (tag[0] && strcmp(tag, "urlset") != 0 && strcmp(tag, "sitemapindex") != 0) {
            refuse(p, "root element is <%s>, not <urlset> or <sitemapindex>", tag);
            return;
        }
    }
    if (err->code == XML_ERR_NO_MEMORY) /* alloc.h aborts first: the names' limit */
        refuse(p, "more than %d bytes of element and attribute names", SITEMAP_MAX_NAMES);
    else if (err->message)
        refuse(p, "not XML: line %d: %s", err->line, err->message);
    else
        refuse(p, "not XML: line %d", err->line);
}

/* Errors libxml2 raises without a parser context go to the process-wide handlers. */
static void drop_structured(void *ctx, xmlErrorPtr err)
{
    (void)ctx, (void)err;
}

static void new_ctxt(sitemap_parser *p)
{
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = start_element;
    sax.endElementNs = end_element;
    sax.characters = characters;
    sax.ignorableWhitespace = characters;
    sax.cdataBlock = characters;
    sax.serror = xml_error;
    /* No getEntity callback, no XML_PARSE_NOENT, no DTD loading: libxml2 2.9 keeps an
     * internal subset's declarations aside (see sitemap_parser_free) but never looks
     * one up for us, so any reference but the five predefined entities and character
     * references is an undeclared entity, a fatal error — nothing is ever expanded. */
    xmlSetStructuredErrorFunc(NULL, drop_structured);
    p->ctxt = xmlCreatePushParserCtxt(&sax, p, NULL, 0, NULL);
    if (!p->ctxt)
        alloc_oom(0); /* all it can lack is memory */
    xmlCtxtUseOptions(
        p->ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
    xmlDictSetLimit(p->ctxt->dict, SITEMAP_MAX_NAMES);
}

/* Bytes libxml2 has and has not parsed yet. */
static size_t held(const sitemap_parser *p)
{
    xmlParserInputPtr in = p->ctxt->input;
    return in && in->cur && in->end ? (size_t)(in->end - in->cur) : 0;
}

static void push(sitemap_parser *p, const char *data, size_t n, bool terminate)
{
    do {
        size_t k = n < PUSH_MAX ? n : PUSH_MAX;
        int rc = xmlParseChunk(p->ctxt, data, (int)k, terminate && k == n);
        if (k > 0)
            data += k, n -= k;
        if (p->stop || rc != 0 || !p->ctxt->wellFormed) {
            if (!p->error[0])
                refuse(p, "not XML: not well-formed");
            p->refused = true;
            xmlStopParser(p->ctxt);
            return;
        }
        if (held(p) > SITEMAP_MAX_HELD) {
            refuse(p, "not a sitemap: an XML tag, comment or text over %d bytes long",
                   SITEMAP_MAX_HELD);
            xmlStopParser(p->ctxt);
            return;
        }
    } while (n > 0);
}

/* ---- text sitemaps ------------------------------------------------------------------ */

static void text_line_end(sitemap_parser *p)
{
    const char *line = collected(p);
    bool url = strncasecmp(p->text, "http://", 7) == 0 || strncasecmp(p->text, "https://", 8) == 0;
    if (!url)
        return;
    p->url_line_seen = true;
    if (line && !memchr(line, '\0', p->text_len)) /* no NUL in a URL (nor in a string) */
        deliver(p, SITEMAP_URL, line);
}

static void text_feed(sitemap_parser *p, const char *data, size_t n)
{
    while (n > 0 && !p->refused) {
        if (!p->collecting)
            collect_start(p);
        const char *nl = data;
        while (nl < data + n && *nl != '\n' && *nl != '\r')
            nl++;
        collect(p, data, (size_t)(nl - data));
        if (nl == data + n)
            return;
        text_line_end(p);
        n -= (size_t)(nl - data) + 1;
        data = nl + 1;
    }
}

/* ---- the bytes, inflated --------------------------------------------------------- */

/* The file's bytes (after inflating) within the byte limit. */
static void take(sitemap_parser *p, const char *data, size_t n)
{
    while (p->kind == KIND_UNKNOWN && n > 0) {
        if (blank(*data)) {
            data++, n--;
        } else {
            unsigned char c = (unsigned char)*data;
            /* '<', or a byte order mark (UTF-8, UTF-16): XML */
            bool xml = c == '<' || c == 0xEF || c == 0xFE || c == 0xFF;
            p->kind = xml ? KIND_XML : KIND_TEXT;
            if (xml)
                new_ctxt(p);
        }
    }
    if (n == 0)
        return;
    if (p->kind == KIND_XML)
        push(p, data, n, false);
    else
        text_feed(p, data, n);
}

/* Counts bytes against the limit; false: no more wanted. */
static bool plain(void *user, const char *data, size_t n)
{
    sitemap_parser *p = user;
    if (p->refused)
        return false;
    size_t room = p->lim.max_bytes - p->bytes;
    bool over = n > room;
    if (over)
        n = room;
    p->bytes += n;
    take(p, data, n);
    if (over)
        refuse(p, "over %zu bytes: the rest ignored", p->lim.max_bytes);
    return !p->refused;
}

/* The raw bytes: gzip (1f 8b) or not, told by the first two. */
static void raw(sitemap_parser *p, const char *data, size_t n)
{
    if (!p->gz) {
        plain(p, data, n);
        return;
    }
    if (http_inflate_feed(p->gz, data, n, plain, p) < 0)
        refuse(p, "gzip: corrupt data");
}

/* Gzip or not, told by the first two bytes (1f 8b); the file may end before. */
static void sniff(sitemap_parser *p)
{
    p->sniffed = true;
    if (p->nmagic == 2 && p->magic[0] == 0x1f && p->magic[1] == 0x8b)
        p->gz = http_inflate_new(HTTP_CODING_GZIP);
    if (p->nmagic > 0)
        raw(p, (const char *)p->magic, p->nmagic);
}

/* ---- the API --------------------------------------------------------------------- */

sitemap_parser *sitemap_parser_new(const sitemap_limits *l, sitemap_loc_fn fn, void *ctx)
{
    libmem_init();
    sitemap_parser *p = xcalloc(1, sizeof *p);
    if (l)
        p->lim = *l;
    else
        sitemap_default_limits(&p->lim);
    p->fn = fn;
    p->ctx = ctx;
    p->text = xmalloc(p->lim.max_loc_len + 1);
    return p;
}

int sitemap_parser_feed(sitemap_parser *p, const void *data, size_t n)
{
    const char *d = data;
    if (p->refused || p->finished)
        return p->refused ? -1 : 0;
    while (!p->sniffed && n > 0) {
        p->magic[p->nmagic++] = (unsigned char)*d++;
        n--;
        if (p->nmagic == 2 || p->magic[0] != 0x1f)
            sniff(p);
    }
    if (!p->refused && n > 0)
        raw(p, d, n);
    return p->refused ? -1 : 0;
}

int sitemap_parser_finish(sitemap_parser *p)
{
    if (p->finished)
        return p->refused ? -1 : 0;
    p->finished = true;
    if (!p->refused && !p->sniffed)
        sniff(p);
    if (p->refused)
        return -1;
    switch (p->kind) {
    case KIND_UNKNOWN: refuse(p, "empty file"); break;
    case KIND_XML:
        push(p, NULL, 0, true);
        if (!p->refused && p->root == ROOT_NONE)
            refuse(p, "not XML: no root element");
        break;
    case KIND_TEXT:
        if (p->collecting)
            text_line_end(p);
        if (!p->refused && !p->url_line_seen)
            refuse(p,
                   "not a sitemap: no <urlset>, and no line starting with http:// or "
                   "https://");
        break;
    }
    return p->refused ? -1 : 0;
}

const char *sitemap_parser_error(const sitemap_parser *p)
{
    return p->error[0] ? p->error : NULL;
}

size_t sitemap_parser_count(const sitemap_parser *p)
{
    return p->count;
}

void sitemap_parser_free(sitemap_parser *p)
{
    if (!p)
        return;
    if (p->ctxt) {
        /* libxml2 keeps an internal subset's entity declarations in a document of its
         * own even without a tree ("for expat compatibility"); ours to free */
        if (p->ctxt->myDoc)
            xmlFreeDoc(p->ctxt->myDoc);
        xmlFreeParserCtxt(p->ctxt);
    }
    http_inflate_free(p->gz);
    free(p->text);
    free(p);
}
