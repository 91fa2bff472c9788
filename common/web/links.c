/* links.c — the link parser: libxml2's SAX push parsers (HTML, or XML for
 * application/xml) fed chunk by chunk. No tree is built; each href attribute is
 * resolved against the current base and handed to the caller as soon as its start
 * tag has been parsed.
 */
#include "links.h"

#include "alloc.h"
#include "libmem.h"
#include "links_charset.h"
#include "links_skip.h"
#include "css_urls.h"
#include "html_open.h"
#include "html_tokenizer.h"
#include "links_requisites.h"
#include "url.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Limits against input on which libxml2 2.9.14 takes quadratic time; the parse stops
 * there, and the links before count. Each end tag that closes nothing is looked up
 * through all the open elements: at most LINKS_MAX_DEPTH of them (also where
 * browsers stop nesting). Each attribute name is compared with all the earlier ones
 * of its tag: a tag is at most LINKS_MAX_TAG bytes. And a page may cost at most
 * LINKS_MAX_WORK units of about one such comparison (~0.5 s), counting attribute
 * pairs, and for each parse error its message and the open elements. */
#define LINKS_MAX_DEPTH  512
#define LINKS_MAX_TAG    (64 * 1024)
#define LINKS_MAX_WORK   ((size_t)1 << 27)
#define LINKS_ERROR_COST 100
/* libxml2 gets the text in blocks of about LINKS_BLOCK bytes, cut where the text
 * says, never where the chunks of the body ended (see push_utf8)... The fuzz build
 * (tests/fuzz) makes it small, so that short inputs cross many blocks. */
#ifndef LINKS_BLOCK
#define LINKS_BLOCK 4096
#endif
/* ...and preferably not in the first LINKS_HOLD bytes of a tag (see block_cut). */
#define LINKS_HOLD       16
/* XML href values shorter than this are copied on the stack, longer ones malloc'd. */
#define LINKS_STACK_HREF 2048

/* Memory. libxml2's push parser keeps every byte it is given until it parses past it,
 * and parses nothing of a construct before its end has arrived; left alone it holds a
 * whole page of text without a '<' (NUL bytes, a gzip bomb's zeros), and all it parsed
 * before. So it keeps at most LINKS_KEEP_PARSED bytes it has parsed (trim_input), and
 * holds at most LINKS_MAX_HELD bytes it has not: past that, the text up to the end of
 * what it is stuck in is dropped (links_skip.h), or the parse stops where no such end
 * is known (a 64 KB DOCTYPE). The names it stores (element and attribute names, each
 * once) are at most LINKS_MAX_NAMES bytes: past that, tags with new names are not
 * parsed. With the stacks of open elements (LINKS_MAX_DEPTH) and our own buffers, a
 * parser never uses more than LINKS_MEMORY_BOUND bytes (links.h), whatever the page
 * holds; tests/unit/test_links.c measures it on hostile pages. */
#ifndef LINKS_MAX_HELD /* the fuzz build makes it small, as LINKS_BLOCK */
#define LINKS_MAX_HELD LINKS_MAX_TAG
#endif
#define LINKS_KEEP_PARSED (8 * 1024)
#define LINKS_MAX_NAMES   (16 * 1024)
/* Requisites mode: the text of <style> elements kept for their url()s, per page. */
#define LINKS_MAX_STYLE   (256 * 1024)

struct links_parser {
    xmlParserCtxtPtr ctxt; /* an HTML or an XML push parser, or NULL when tok is used */
    html_tokenizer *tok;   /* LINKS_TOKENIZER: the HTML path without libxml2 */
    html_open *open;       /* with tok: the open elements, for the limits */
    bool xml;
    bool finished;
    bool base_seen;          /* the first <base href> has been seen; later ones are ignored */
    bool limit_hit;          /* no more links; the parse is stopped once libxml2 returns */
    size_t work;             /* units spent against LINKS_MAX_WORK */
    charset_decoder dec;     /* the body's bytes go through here first */
    char block[LINKS_BLOCK]; /* text not yet given to libxml2 (push_utf8) */
    size_t block_len;
    bool skipping; /* dropping text until the end skip looks for (push_utf8) */
    text_skip skip;
    char *page_url;
    char *base; /* resolved <base href>, or NULL: links resolve against page_url */
    links_fn fn;
    void *ctx;
    bool requisites; /* links_new_requisites: what the page loads, not its hrefs */
    bool in_style;   /* inside a <style> element: its text is CSS */
    char *style;     /* that text so far (at most LINKS_MAX_STYLE bytes a page) */
    size_t style_len, style_cap, style_total;
};

static const char *const XHTML_NS = "http://www.w3.org/1999/xhtml";

bool links_wanted(const char *media_type)
{
    if (!media_type)
        return false;
    return strcmp(media_type, "text/html") == 0 || strcmp(media_type, "application/xhtml+xml") == 0
        || strcmp(media_type, "application/xml") == 0;
}

/* ---- silence ---------------------------------------------------------------- */

static void drop_generic(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static void drop_structured(void *ctx, xmlErrorPtr err)
{
    (void)ctx;
    (void)err;
}

/* Some libxml2 errors (encoding ones, for instance) are raised without a parser
 * context and go to these process-wide handlers. Setting them again is harmless. */
static void silence_libxml2(void)
{
    xmlSetGenericErrorFunc(NULL, drop_generic);
    xmlSetStructuredErrorFunc(NULL, drop_structured);
}

/* ---- one href ---------------------------------------------------------------- */

/* An href value of an ordinary element, or of a <base> element when is_base. The
 * value is passed as is: url_resolve strips the whitespace browsers strip. */
static void handle_href(links_parser *lp, const char *href, bool is_base)
{
    if (is_base) {
        if (!lp->base_seen) {
            lp->base_seen = true;
            lp->base = url_resolve(lp->page_url, href); /* NULL: keep the page URL */
        }
        return;
    }
    char *url = url_resolve(lp->base ? lp->base : lp->page_url, href);
    if (url) {
        lp->fn(lp->ctx, url);
        free(url);
    }
}

/* ---- SAX callbacks ------------------------------------------------------------ */

/* Counts work against the limits. Stopping libxml2 from within its callbacks is not
 * safe everywhere, so this only marks the page; push() stops the parser when
 * libxml2 returns, and no link is passed on meanwhile. */
static void spend(links_parser *lp, size_t units)
{
    lp->work += units;
    size_t work = lp->work + (lp->tok ? html_tokenizer_work(lp->tok) : 0);
    size_t depth = lp->ctxt ? (size_t)lp->ctxt->nameNr : html_open_depth(lp->open);
    if (work > LINKS_MAX_WORK || depth > LINKS_MAX_DEPTH)
        lp->limit_hit = true;
}

/* For a start tag with n attributes; true when its links no longer count. */
static bool start_tag_limited(links_parser *lp, size_t n)
{
    spend(lp, n * n / 2);
    return lp->limit_hit;
}

/* libxml2's errors, every one of them dropped (the SAX handler's serror). */
static void count_error(void *user, xmlErrorPtr err)
{
    (void)err;
    links_parser *lp = user;
    if (lp && lp->ctxt)
        spend(lp, LINKS_ERROR_COST + (size_t)lp->ctxt->nameNr);
}

/* Requisites mode: a URL a tag (or a <style>) loads. */
static void on_requisite(void *user, const char *url)
{
    handle_href(user, url, false);
}

/* Requisites mode: <base href> as always, then what the tag loads. */
static void requisite_tag(links_parser *lp, const char *name, const char *const *atts)
{
    if (strcmp(name, "style") == 0) {
        lp->in_style = true;
        lp->style_len = 0;
    }
    if (!atts)
        return;
    if (strcmp(name, "base") == 0) {
        for (size_t i = 0; atts[i]; i += 2)
            if (strcasecmp(atts[i], "href") == 0) {
                handle_href(lp, atts[i + 1] ? atts[i + 1] : "", true);
                break;
            }
        return;
    }
    requisites_of_tag(name, atts, on_requisite, lp);
}

/* Requisites mode: the text of a <style> element (libxml2 hands a script's or a
 * style's text to cdataBlock), kept until its end tag. */
static void style_text(void *user, const xmlChar *text, int len)
{
    links_parser *lp = user;
    if (!lp->in_style || len <= 0 || lp->style_total + (size_t)len > LINKS_MAX_STYLE)
        return;
    xappend(&lp->style, &lp->style_len, &lp->style_cap, text, (size_t)len);
    lp->style_total += (size_t)len;
}

static void html_end_element(void *user, const xmlChar *name)
{
    links_parser *lp = user;
    if (lp->in_style && strcmp((const char *)name, "style") == 0) {
        lp->in_style = false;
        if (!lp->limit_hit)
            css_urls(lp->style, lp->style_len, on_requisite, lp);
        lp->style_len = 0;
    }
}

/* HTML: libxml2 gives lower-cased names, and NULL for a value-less attribute
 * (<a href>), which browsers read as an empty href. */
static void start_tag(links_parser *lp, const char *name, const char *const *atts)
{
    if (lp->requisites) {
        requisite_tag(lp, name, atts);
        return;
    }
    if (!atts)
        return;
    bool is_base = strcasecmp(name, "base") == 0;
    for (size_t i = 0; atts[i]; i += 2) {
        if (strcasecmp(atts[i], "href") != 0)
            continue;
        handle_href(lp, atts[i + 1] ? atts[i + 1] : "", is_base);
        if (is_base)
            return; /* a second href on the same <base> is no link either */
    }
}

static void html_start_element(void *user, const xmlChar *name, const xmlChar **atts)
{
    links_parser *lp = user;
    size_t n = 0;
    while (atts && atts[2 * n])
        n++;
    if (start_tag_limited(lp, n))
        return;
    start_tag(lp, (const char *)name, (const char *const *)atts);
}

/* ---- the tokenizer's callbacks (LINKS_TOKENIZER) ------------------------------------ */

/* The limits hold as on libxml2's path: the tokenizer counts attribute pairs (and stops
 * at LINKS_MAX_TAG), html_open the open elements and what end tags look through. */
static void tok_start(void *user, const char *name, const char *const *atts, bool self_closing)
{
    links_parser *lp = user;
    spend(lp, html_open_start(lp->open, name, self_closing));
    if (lp->limit_hit) {
        html_tokenizer_stop(lp->tok);
        return;
    }
    start_tag(lp, name, atts);
}

static void tok_end(void *user, const char *name)
{
    links_parser *lp = user;
    spend(lp, html_open_end(lp->open, name));
    if (lp->limit_hit) {
        html_tokenizer_stop(lp->tok);
        return;
    }
    html_end_element(user, (const xmlChar *)name);
}

static void tok_text(void *user, const char *elem, const char *text, size_t len)
{
    if (strcmp(elem, "style") == 0)
        style_text(user, (const xmlChar *)text, (int)len);
}

/* An XML attribute value, not NUL-terminated. Without entity substitution libxml2
 * hands '&' (from &amp; or &#38;) over as "&#38;", which is turned back here. The
 * copy lives on the stack, or is malloc'd when long. */
static void handle_value(links_parser *lp, const char *v, size_t len, bool is_base)
{
    static const char amp[] = "&#38;";
    char stack[LINKS_STACK_HREF];
    char *buf = len < sizeof stack ? stack : xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        buf[n++] = v[i];
        if (v[i] == '&' && len - i >= sizeof amp - 1 && memcmp(v + i, amp, sizeof amp - 1) == 0)
            i += sizeof amp - 2;
    }
    buf[n] = '\0';
    handle_href(lp, buf, is_base);
    if (buf != stack)
        free(buf);
}

/* XML (SAX2): attributes come as (localname, prefix, URI, value, end) with the value
 * not NUL-terminated. An XHTML <base> sets the base as in HTML. */
static void xml_start_element(void *user, const xmlChar *localname, const xmlChar *prefix,
                              const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                              int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    (void)prefix;
    (void)nb_namespaces;
    (void)namespaces;
    (void)nb_defaulted;
    links_parser *lp = user;
    if (start_tag_limited(lp, (size_t)nb_attributes))
        return;
    bool is_base = uri && strcmp((const char *)uri, XHTML_NS) == 0
        && strcmp((const char *)localname, "base") == 0;
    for (int i = 0; i < nb_attributes; i++) {
        const xmlChar **a = attributes + 5 * i;
        if (strcmp((const char *)a[0], "href") != 0)
            continue;
        handle_value(lp, (const char *)a[3], (size_t)(a[4] - a[3]), is_base);
        if (is_base)
            return;
    }
}

static void sax_drop_message(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* A SAX handler that only sees start tags (and in requisites mode the text and end of
 * <style> elements) and swallows every error and warning. */
static void init_sax(xmlSAXHandler *sax, bool xml, bool requisites)
{
    memset(sax, 0, sizeof *sax);
    sax->initialized = XML_SAX2_MAGIC; /* so that serror below is used */
    if (xml)
        sax->startElementNs = xml_start_element;
    else
        sax->startElement = html_start_element;
    if (requisites && !xml) {
        sax->cdataBlock = style_text;
        sax->endElement = html_end_element;
    }
    sax->warning = sax_drop_message;
    sax->error = sax_drop_message;
    sax->fatalError = sax_drop_message;
    sax->serror = count_error;
}

static void push_utf8(void *user, const char *data, size_t len);

/* ---- parser life ------------------------------------------------------------- */

/* libxml2 only ever gets UTF-8 from the decoder, hence IGNORE_ENC: neither a
 * <meta charset> nor an XML declaration may switch it to another encoding. */
static xmlParserCtxtPtr new_ctxt(links_parser *lp)
{
    xmlSAXHandler sax;
    init_sax(&sax, lp->xml, lp->requisites);
    xmlParserCtxtPtr c;
    if (lp->xml)
        c = xmlCreatePushParserCtxt(&sax, lp, NULL, 0, NULL);
    else
        c = htmlCreatePushParserCtxt(&sax, lp, NULL, 0, NULL, XML_CHAR_ENCODING_UTF8);
    if (!c)
        alloc_oom(0); /* all it can lack is memory */
    /* No XML_PARSE_NOENT and no DTD loading: entities are never expanded or fetched
     * (billion laughs, XXE); our SAX handler has no entity callbacks anyway. */
    if (lp->xml)
        xmlCtxtUseOptions(c,
                          XML_PARSE_IGNORE_ENC | XML_PARSE_NONET | XML_PARSE_NOERROR
                              | XML_PARSE_NOWARNING | XML_PARSE_RECOVER);
    else
        htmlCtxtUseOptions(c,
                           HTML_PARSE_IGNORE_ENC | HTML_PARSE_NONET | HTML_PARSE_NOERROR
                               | HTML_PARSE_NOWARNING | HTML_PARSE_RECOVER);
    /* The names links are made of, stored first: a page that fills the names' space
     * with names of its own cannot keep those tags from being parsed. */
    static const char *const link_names[] = {"a", "href", "base", "link", "area"};
    for (size_t i = 0; i < sizeof link_names / sizeof link_names[0]; i++)
        xmlDictLookup(c->dict, BAD_CAST link_names[i], -1);
    xmlDictSetLimit(c->dict, LINKS_MAX_NAMES);
    return c;
}

static links_parser *parser_new(const char *base_url, const char *charset, bool xml,
                                bool requisites, links_engine engine, links_fn fn, void *ctx)
{
    if (!fn)
        return NULL;
    libmem_init();
    silence_libxml2();
    links_parser *lp = xcalloc(1, sizeof *lp);
    lp->xml = xml;
    lp->requisites = requisites;
    lp->fn = fn;
    lp->ctx = ctx;
    charset_decoder_init(&lp->dec, charset, push_utf8, lp);
    lp->page_url = xstrdup(base_url ? base_url : "");
    if (!xml && engine == LINKS_TOKENIZER) {
        static const html_tokenizer_ops ops = {tok_start, tok_end, tok_text};
        lp->tok = html_tokenizer_new(&ops, lp, LINKS_MAX_TAG, LINKS_MAX_WORK);
        lp->open = html_open_new(LINKS_MAX_DEPTH);
    } else {
        lp->ctxt = new_ctxt(lp);
    }
    return lp;
}

links_parser *links_new(const char *base_url, const char *charset, bool xml, links_fn fn, void *ctx)
{
    return parser_new(base_url, charset, xml, false, LINKS_DEFAULT_ENGINE, fn, ctx);
}

links_parser *links_new_requisites(const char *base_url, const char *charset, links_fn fn,
                                   void *ctx)
{
    return parser_new(base_url, charset, false, true, LINKS_DEFAULT_ENGINE, fn, ctx);
}

links_parser *links_new_engine(const char *base_url, const char *charset, bool requisites,
                               links_engine engine, links_fn fn, void *ctx)
{
    return parser_new(base_url, charset, false, requisites, engine, fn, ctx);
}

static bool halted(const links_parser *lp)
{
    if (lp->tok)
        return lp->limit_hit || html_tokenizer_stopped(lp->tok);
    return lp->ctxt->instate == XML_PARSER_EOF || lp->limit_hit;
}

static void parse_chunk(links_parser *lp, const char *data, int len, int terminate)
{
    if (lp->xml)
        xmlParseChunk(lp->ctxt, data, len, terminate);
    else
        htmlParseChunk(lp->ctxt, data, len, terminate);
}

/* How much of the start tag libxml2 waits to see the end of has arrived so far
 * (0 when it is not waiting for one). */
static size_t pending_tag(const links_parser *lp)
{
    xmlParserInputPtr in = lp->ctxt->input;
    if (lp->ctxt->instate != XML_PARSER_START_TAG || !in || !in->cur || !in->end)
        return 0;
    return (size_t)(in->end - in->cur);
}

/* Whether the start tag libxml2 is on has reached LINKS_MAX_TAG bytes without an
 * end. libxml2 may also be waiting on a tag it has all of (it can remember a scan
 * position past the tag's end), hence a fresh look from the tag's start first. */
static bool tag_too_long(links_parser *lp)
{
    if (pending_tag(lp) < LINKS_MAX_TAG)
        return false;
    lp->ctxt->checkIndex = 0;
    parse_chunk(lp, "", 0, 0);
    return pending_tag(lp) >= LINKS_MAX_TAG;
}

static void stop(links_parser *lp)
{
    lp->limit_hit = true;
    xmlStopParser(lp->ctxt);
}

/* Bytes libxml2 has and has not parsed yet. */
static size_t held(const links_parser *lp)
{
    xmlParserInputPtr in = lp->ctxt->input;
    return in && in->cur && in->end ? (size_t)(in->end - in->cur) : 0;
}

/* Where libxml2 is in the text given to it so far. */
static unsigned long parsed_to(const links_parser *lp)
{
    xmlParserInputPtr in = lp->ctxt->input;
    return in ? in->consumed + (unsigned long)(in->cur - in->base) : 0;
}

/* libxml2's HTML push parser drops the text it has parsed only now and then, inside
 * some of its functions; past LINKS_KEEP_PARSED bytes we drop it here
 * (xmlParserInputShrink keeps the last line). checkIndex — where libxml2's search for
 * the end of a construct goes on from — counts from the start of the buffer, so it
 * moves with it. */
static void trim_input(links_parser *lp)
{
    xmlParserInputPtr in = lp->ctxt->input;
    if (!in || !in->buf || (size_t)(in->cur - in->base) < LINKS_KEEP_PARSED)
        return;
    long before = in->cur - in->base;
    xmlParserInputShrink(in);
    long moved = before - (in->cur - in->base);
    lp->ctxt->checkIndex = lp->ctxt->checkIndex > moved ? lp->ctxt->checkIndex - moved : 0;
}

/* Pushes in slices so that a start tag never grows past LINKS_MAX_TAG unseen: the
 * parse stops exactly when a tag is longer, whatever the chunks were. */
static void push(links_parser *lp, const char *data, size_t len)
{
    while (len > 0 && !halted(lp)) {
        size_t n = LINKS_MAX_TAG - pending_tag(lp);
        if (n > len)
            n = len;
        parse_chunk(lp, data, (int)n, 0);
        trim_input(lp);
        data += n;
        len -= n;
        if (lp->limit_hit || tag_too_long(lp))
            stop(lp);
    }
}

/* ---- what libxml2 is stuck in ----------------------------------------------------- */

static bool starts(const xmlChar *p, const char *prefix)
{
    return strncmp((const char *)p, prefix, strlen(prefix)) == 0;
}

/* libxml2 holds LINKS_MAX_HELD bytes it has not parsed: the end of the construct it
 * waits for, as libxml2 2.9.14 looks for it (htmlParseTryOrFinish, xmlParseTryOrFinish),
 * in *end1 (and *end2). False when it waits for something else (a start tag, a DOCTYPE,
 * an XML reference): no text of those is dropped. */
static bool stuck_on(const links_parser *lp, const char **end1, const char **end2, bool *nocase)
{
    xmlParserCtxtPtr c = lp->ctxt;
    const xmlChar *cur = c->input->cur; /* LINKS_MAX_HELD bytes follow */
    *end2 = NULL;
    *nocase = false;
    bool content = c->instate == XML_PARSER_CONTENT;
    if (!content && c->instate != XML_PARSER_MISC && c->instate != XML_PARSER_PROLOG
        && c->instate != XML_PARSER_EPILOG)
        *end1 = !lp->xml && c->instate == XML_PARSER_END_TAG    ? ">"
            : lp->xml && c->instate == XML_PARSER_CDATA_SECTION ? "]]>"
                                                                : NULL;
    else if (!lp->xml && content && c->name
             && (xmlStrEqual(c->name, BAD_CAST "script")
                 || xmlStrEqual(c->name, BAD_CAST "style"))) {
        *end1 = xmlStrEqual(c->name, BAD_CAST "script") ? "</script" : "</style";
        *nocase = true; /* in recovery mode only its own end tag ends it */
    } else if (starts(cur, "<!--")) {
        *end1 = "-->";
        *end2 = lp->xml ? NULL : "--!>";
    } else if (starts(cur, "<?"))
        *end1 = lp->xml ? "?>" : ">";
    else if (content && cur[0] != '<' && (!lp->xml || cur[0] != '&'))
        *end1 = "<"; /* text (an XML reference waits for its ';') */
    else
        *end1 = NULL;
    return *end1 != NULL;
}

/* After each block given to libxml2: when it holds LINKS_MAX_HELD bytes it has not
 * parsed and waits for the end of a construct (it has looked for it in all of them),
 * the text up to that end is dropped: push_utf8 feeds the skipper. Otherwise let it
 * parse what it can (some of its states take a few hundred bytes per call), and stop
 * the parse if it still holds that much. */
static void watch_held(links_parser *lp)
{
    if (halted(lp) || held(lp) < LINKS_MAX_HELD || pending_tag(lp) > 0)
        return; /* a start tag: LINKS_MAX_TAG (push) */
    const char *end1, *end2;
    bool nocase;
    if (stuck_on(lp, &end1, &end2, &nocase)) {
        text_skip_start(&lp->skip, end1, end2, nocase, (const char *)lp->ctxt->input->cur,
                        held(lp));
        lp->skipping = true;
        return;
    }
    while (!halted(lp) && held(lp) >= LINKS_MAX_HELD) {
        unsigned long at = parsed_to(lp);
        parse_chunk(lp, "", 0, 0);
        trim_input(lp);
        if (parsed_to(lp) == at) {
            stop(lp);
            return;
        }
    }
}

/* While skipping: the text not given to libxml2 goes through the skipper, what is in
 * lp->block first (right after the skip began). Returns how many bytes of data were
 * used. Once the end is found, it (and what follows) is gathered as usual. */
static size_t skip_text(links_parser *lp, const char *data, size_t len)
{
    bool found;
    if (lp->block_len > 0) { /* nothing was kept back yet: no emit */
        size_t k = text_skip_scan(&lp->skip, lp->block, lp->block_len, &found);
        lp->block_len = found ? lp->block_len - k : 0;
        memmove(lp->block, lp->block + k, lp->block_len);
        lp->skipping = !found;
        return 0;
    }
    size_t k = text_skip_scan(&lp->skip, data, len, &found);
    if (found) {
        memcpy(lp->block, lp->skip.emit, lp->skip.emit_len);
        lp->block_len = lp->skip.emit_len;
        lp->skipping = false;
    }
    return k;
}

/* Where to cut a block of n (> LINKS_HOLD) bytes of text: what comes before is given
 * to libxml2, the rest starts the next block. libxml2 2.9.14's HTML push parser
 * mistakes script (or style) text for markup when a chunk ends inside its end tag
 * ("...</scr" then "ipt>"), or right before a "</" inside it. So the cut is, if there
 * is one in the second half of the block, the last place with no '<' in the
 * LINKS_HOLD bytes before it nor right there, nor right after it; else just before the
 * character before the first '<' in the last LINKS_HOLD bytes. Never inside a UTF-8
 * character either: libxml2 would take it for invalid. */
static size_t block_cut(const char *d, size_t n)
{
    size_t c = n - 2; /* the byte after the cut is in the block too */
    while (c >= n / 2) {
        size_t lo = c > LINKS_HOLD ? c - LINKS_HOLD : 0;
        const char *lt = memrchr(d + lo, '<', c + 2 - lo); /* the last one up to c + 1 */
        if (lt) {
            size_t l = (size_t)(lt - d);
            if (l < 2)
                break;
            c = l - 2;
        } else if (((unsigned char)d[c] & 0xC0) == 0x80) {
            c--;
        } else {
            return c;
        }
    }
    const char *lt = memchr(d + n - LINKS_HOLD, '<', LINKS_HOLD);
    c = lt ? (size_t)(lt - d) : n;
    if (c > 0)
        c--;
    while (c > 0 && ((unsigned char)d[c] & 0xC0) == 0x80)
        c--;
    return c;
}

void links_feed(links_parser *lp, const char *data, size_t len)
{
    if (!lp || lp->finished || !data || halted(lp))
        return;
    charset_decoder_feed(&lp->dec, data, len);
}

/* The decoder's output. libxml2's result depends on where its chunks end (beyond the
 * cases block_cut avoids), so it never sees the chunks the body came in: the text is
 * given to it in blocks of LINKS_BLOCK bytes, each cut by block_cut, the rest carried
 * over to the next block. The blocks depend on the text only, and so do the links. */
static void push_utf8(void *user, const char *data, size_t len)
{
    links_parser *lp = user;
    if (lp->tok) { /* the tokenizer takes the text in pieces of any size */
        html_tokenizer_feed(lp->tok, data, len);
        return;
    }
    while (len > 0 && !halted(lp)) {
        if (lp->skipping) {
            size_t used = skip_text(lp, data, len);
            data += used;
            len -= used;
            continue;
        }
        const char *blk = data;
        size_t take = len;
        if (lp->block_len > 0 || len < LINKS_BLOCK) { /* gather a block in lp->block */
            take = LINKS_BLOCK - lp->block_len;
            if (take > len)
                take = len;
            memcpy(lp->block + lp->block_len, data, take);
            lp->block_len += take;
            if (lp->block_len < LINKS_BLOCK)
                return;
            blk = lp->block;
        } else { /* a whole block is there in data: no copy */
            take = LINKS_BLOCK;
        }
        size_t cut = block_cut(blk, LINKS_BLOCK);
        push(lp, blk, cut);
        size_t rest = LINKS_BLOCK - cut;
        if (blk == lp->block) {
            memmove(lp->block, lp->block + cut, rest);
            lp->block_len = rest;
            data += take;
            len -= take;
        } else {
            data += cut; /* the rest starts the next block */
            len -= cut;
        }
        watch_held(lp);
    }
}

void links_finish(links_parser *lp)
{
    if (!lp || lp->finished)
        return;
    lp->finished = true;
    charset_decoder_finish(&lp->dec);
    if (lp->tok) {
        html_tokenizer_finish(lp->tok);
        return;
    }
    if (lp->skipping && lp->block_len > 0)
        skip_text(lp, NULL, 0); /* a skip began with the last block: look through it */
    bool stuck = lp->skipping;
    if (stuck) /* no end came: what was kept back is dropped too */
        lp->block_len = 0;
    push(lp, lp->block, lp->block_len);
    /* Stuck, libxml2 holds only the inside of a construct without links (text, a
     * comment, a script): parsing it at the end would only cost memory. */
    if (!halted(lp) && !stuck)
        parse_chunk(lp, "", 0, 1);
    lp->block_len = 0;
}

void links_free(links_parser *lp)
{
    if (!lp)
        return;
    if (lp->ctxt) {
        if (lp->ctxt->myDoc) /* never built by our handlers; freed just in case */
            xmlFreeDoc(lp->ctxt->myDoc);
        lp->ctxt->myDoc = NULL;
        if (lp->xml)
            xmlFreeParserCtxt(lp->ctxt);
        else
            htmlFreeParserCtxt(lp->ctxt);
    }
    html_tokenizer_free(lp->tok);
    html_open_free(lp->open);
    charset_decoder_free(&lp->dec);
    free(lp->style);
    free(lp->base);
    free(lp->page_url);
    free(lp);
}
