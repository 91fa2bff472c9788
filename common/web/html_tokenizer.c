/* html_tokenizer.c — the WHATWG HTML tokenizer's states as far as tags go
 * (html_tokenizer.h). One loop over the input, one case per state; the states named
 * as in the standard's section 13.2.5. Text, comments and raw text are skipped with
 * memchr; only a tag is copied, into t->buf.
 */
#include "html_tokenizer.h"

#include "alloc.h"
#include "html_entities.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum state {
    S_DATA,
    S_TAG_OPEN,
    S_END_TAG_OPEN,
    S_TAG_NAME,
    S_BEFORE_ATTR_NAME,
    S_ATTR_NAME,
    S_AFTER_ATTR_NAME,
    S_BEFORE_ATTR_VALUE,
    S_VALUE_DQ,
    S_VALUE_SQ,
    S_VALUE_UNQ,
    S_AFTER_VALUE_QUOTED,
    S_SELF_CLOSING,
    S_MARKUP_DECL, /* "<!" seen: "--", "doctype" or "[CDATA[" next? */
    S_BOGUS,       /* a bogus comment: until '>' */
    S_DOCTYPE,     /* until '>' too, at most max_tag bytes */
    S_COMMENT_START,
    S_COMMENT_START_DASH,
    S_COMMENT,
    S_COMMENT_END_DASH,
    S_COMMENT_END,
    S_COMMENT_END_BANG,
    S_RAW,          /* RAWTEXT or RCDATA (t->raw names the element) */
    S_RAW_LT,       /* '<' in it */
    S_RAW_END_NAME, /* "</" and t->match bytes of t->raw; back to t->ret if not */
    S_SCRIPT,
    S_SCRIPT_LT,
    S_SCRIPT_ESC_START,
    S_SCRIPT_ESC_START_DASH,
    S_SCRIPT_ESC,
    S_SCRIPT_ESC_DASH,
    S_SCRIPT_ESC_DASH_DASH,
    S_SCRIPT_ESC_LT,
    S_SCRIPT_DESC_START, /* double-escape start: "<" and letters, in t->temp */
    S_SCRIPT_DESC,
    S_SCRIPT_DESC_DASH,
    S_SCRIPT_DESC_DASH_DASH,
    S_SCRIPT_DESC_LT,
    S_SCRIPT_DESC_END,
    S_PLAINTEXT,
    S_STOPPED,
};

/* An attribute of the tag being read: offsets into t->buf. */
typedef struct attr_pos {
    size_t name, value;
} attr_pos;

struct html_tokenizer {
    html_tokenizer_ops ops;
    void *ctx;
    size_t max_tag, max_work, work;
    enum state state;
    /* the tag being read */
    bool is_end;
    bool overlong; /* an end tag past max_tag: not stored, not handed over */
    bool self_closing;
    size_t tag_bytes;
    char *buf;
    size_t buf_len, buf_cap;
    size_t name_len; /* the tag name's, in buf[0..] */
    attr_pos *atts;
    size_t natt, att_cap;
    const char **ptrs; /* atts as handed over */
    size_t ptr_cap;
    bool in_attr, has_value, dup, special; /* the attribute being read */
    size_t cur_name, cur_value;            /* its offsets in buf */
    char *scratch;                         /* decoded values */
    size_t scratch_cap;
    /* "<!" lookahead */
    char decl[8];
    size_t decl_len;
    /* raw text */
    const char *raw; /* the element whose end tag ends it */
    size_t match;    /* bytes of raw matched after "</" */
    enum state ret;  /* where a failed end tag goes back to */
    char cand[16];   /* "</" and the bytes matched: text when the match fails */
    size_t cand_len;
    char temp[8]; /* script double-escape: "script" or not */
    size_t temp_len;
};

html_tokenizer *html_tokenizer_new(const html_tokenizer_ops *ops, void *ctx, size_t max_tag,
                                   size_t max_work)
{
    html_tokenizer *t = xcalloc(1, sizeof *t);
    t->ops = *ops;
    t->ctx = ctx;
    t->max_tag = max_tag;
    t->max_work = max_work;
    t->state = S_DATA;
    return t;
}

void html_tokenizer_free(html_tokenizer *t)
{
    if (!t)
        return;
    free(t->buf);
    free(t->atts);
    free(t->ptrs);
    free(t->scratch);
    free(t);
}

void html_tokenizer_stop(html_tokenizer *t)
{
    t->state = S_STOPPED;
}

size_t html_tokenizer_work(const html_tokenizer *t)
{
    return t->work;
}

bool html_tokenizer_stopped(const html_tokenizer *t)
{
    return t->state == S_STOPPED;
}

/* ---- characters -------------------------------------------------------------- */

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static bool is_alpha(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(unsigned char c)
{
    return is_alpha(c) || is_digit(c);
}

static char lower(unsigned char c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
}

static int hex_value(unsigned char c)
{
    if (is_digit(c))
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- character references (13.2.5.72 to 13.2.5.80) ----------------------------- */

/* The numeric character reference end state's replacements for 0x80 to 0x9F
 * (windows-1252; 0 where the code point stays). */
static const uint16_t C1_TABLE[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

/* A numeric reference at in[0] == '&', in[1] == '#' (n > 1). Writes it to out and
 * returns the bytes used, or 0 when no digit follows (not a reference). */
static size_t numeric_ref(const char *in, size_t n, char *out, size_t *wrote)
{
    size_t i = 2;
    bool hex = i < n && (in[i] == 'x' || in[i] == 'X');
    if (hex)
        i++;
    size_t start = i;
    uint32_t cp = 0;
    for (; i < n; i++) {
        int v = hex                          ? hex_value((unsigned char)in[i])
            : is_digit((unsigned char)in[i]) ? in[i] - '0'
                                             : -1;
        if (v < 0)
            break;
        cp = cp > 0x10FFFF ? cp : cp * (hex ? 16 : 10) + (uint32_t)v;
    }
    if (i == start)
        return 0;
    if (i < n && in[i] == ';')
        i++;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    else if (cp >= 0x80 && cp <= 0x9F && C1_TABLE[cp - 0x80])
        cp = C1_TABLE[cp - 0x80];
    *wrote = put_utf8(out, cp);
    return i;
}

/* A named reference at in[0] == '&' followed by an alphanumeric, in an attribute
 * value: the name with its ';', or (a legacy one) the whole alphanumeric run when
 * no '=' follows it — a shorter match followed by an alphanumeric, or one followed
 * by '=', is no reference in an attribute. Returns the bytes used or 0. */
static size_t named_ref(const char *in, size_t n, char *out, size_t *wrote)
{
    size_t run = 1;
    while (run < n && run <= HTML_ENTITY_MAX && is_alnum((unsigned char)in[run]))
        run++;
    const char *text = NULL;
    size_t used = 0;
    if (run < n && in[run] == ';' && (text = html_entity(in + 1, run)) != NULL)
        used = run + 1;
    else if ((run == n || in[run] != '=') && (text = html_entity(in + 1, run - 1)) != NULL)
        used = run;
    if (!text)
        return 0;
    size_t len = strlen(text);
    memcpy(out, text, len);
    *wrote = len;
    return used;
}

size_t html_decode_attr(const char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)in[i];
        if (c == '&' && i + 1 < n) {
            size_t wrote = 0, used = 0;
            if (in[i + 1] == '#')
                used = numeric_ref(in + i, n - i, out + o, &wrote);
            else if (is_alnum((unsigned char)in[i + 1]))
                used = named_ref(in + i, n - i, out + o, &wrote);
            if (used) {
                i += used;
                o += wrote;
                continue;
            }
        }
        if (c == '\0') {
            o += put_utf8(out + o, 0xFFFD);
        } else if (c == '\r') {
            out[o++] = '\n';
            if (i + 1 < n && in[i + 1] == '\n')
                i++;
        } else {
            out[o++] = (char)c;
        }
        i++;
    }
    out[o] = '\0';
    return o;
}

/* ---- the tag being read --------------------------------------------------------- */

static void buf_put(html_tokenizer *t, const char *s, size_t n)
{
    if (t->is_end && (t->in_attr || t->buf_len + n > t->max_tag)) {
        t->overlong = t->overlong || !t->in_attr;
        return; /* an end tag's attributes are dropped */
    }
    if (t->buf_len + n + 1 > t->buf_cap) {
        size_t cap = t->buf_cap ? t->buf_cap : 256;
        while (cap < t->buf_len + n + 1)
            cap *= 2;
        t->buf = xrealloc(t->buf, cap);
        t->buf_cap = cap;
    }
    memcpy(t->buf + t->buf_len, s, n);
    t->buf_len += n;
}

/* One byte of a name: lower-cased, NUL as U+FFFD. */
static void name_byte(html_tokenizer *t, unsigned char c)
{
    if (c == '\0') {
        buf_put(t, "\xEF\xBF\xBD", 3);
        return;
    }
    char l = lower(c);
    buf_put(t, &l, 1);
}

static void tag_begin(html_tokenizer *t, bool is_end)
{
    t->is_end = is_end;
    t->overlong = false;
    t->self_closing = false;
    t->tag_bytes = 0;
    t->buf_len = 0;
    t->natt = 0;
    t->in_attr = false;
}

static void tag_name_done(html_tokenizer *t)
{
    t->name_len = t->buf_len;
    buf_put(t, "", 1);
}

static void attr_finish(html_tokenizer *t);

static void attr_begin(html_tokenizer *t)
{
    attr_finish(t);
    t->in_attr = true;
    t->has_value = false;
    t->dup = false;
    t->cur_name = t->buf_len;
}

/* Its name is complete: is it a repeat of an earlier one (dropped, as the standard
 * says)? Costs one unit of work per earlier attribute. */
static void attr_name_done(html_tokenizer *t)
{
    buf_put(t, "", 1);
    if (t->is_end)
        return;
    t->work += t->natt;
    if (t->work > t->max_work) {
        t->state = S_STOPPED;
        return;
    }
    const char *name = t->buf + t->cur_name;
    for (size_t i = 0; i < t->natt && !t->dup; i++)
        t->dup = strcmp(t->buf + t->atts[i].name, name) == 0;
}

static void value_begin(html_tokenizer *t)
{
    t->has_value = true;
    t->special = false;
    t->cur_value = t->buf_len;
}

/* Bytes of a value; '&', CR and NUL make it one to decode. */
static void value_put(html_tokenizer *t, const char *s, size_t n)
{
    if (t->is_end)
        return;
    for (size_t i = 0; i < n && !t->special; i++)
        t->special = s[i] == '&' || s[i] == '\r' || s[i] == '\0';
    buf_put(t, s, n);
}

static void attr_finish(html_tokenizer *t)
{
    if (!t->in_attr)
        return;
    if (!t->has_value)
        value_begin(t);
    t->in_attr = false;
    if (t->is_end)
        return;
    if (t->dup) {
        t->buf_len = t->cur_name;
        return;
    }
    if (t->special) {
        size_t n = t->buf_len - t->cur_value;
        if (3 * n + 1 > t->scratch_cap) {
            t->scratch_cap = 3 * n + 1;
            t->scratch = xrealloc(t->scratch, t->scratch_cap);
        }
        size_t len = html_decode_attr(t->buf + t->cur_value, n, t->scratch);
        t->buf_len = t->cur_value;
        buf_put(t, t->scratch, len);
    }
    buf_put(t, "", 1);
    if (t->natt == t->att_cap) {
        t->att_cap = t->att_cap ? 2 * t->att_cap : 16;
        t->atts = xrealloc(t->atts, t->att_cap * sizeof *t->atts);
    }
    t->atts[t->natt].name = t->cur_name;
    t->atts[t->natt].value = t->cur_value;
    t->natt++;
}

/* The elements after whose start tag the text is raw (the tree builder's "in body"
 * rules): the state it switches the tokenizer to. */
static enum state text_state(const char *name, const char **raw)
{
    static const char *const rawtext[] = {"style",    "xmp",      "iframe", "noembed",
                                          "noframes", "textarea", "title"};
    *raw = NULL;
    /* most tags are none of them: <a>, <p>, <div> are known by their first two bytes */
    if (!strchr("instxp", name[0]) || name[0] == '\0' || name[1] == '\0')
        return S_DATA;
    if (strcmp(name, "script") == 0) {
        *raw = "script";
        return S_SCRIPT;
    }
    if (strcmp(name, "plaintext") == 0)
        return S_PLAINTEXT;
    for (size_t i = 0; i < sizeof rawtext / sizeof rawtext[0]; i++)
        if (strcmp(name, rawtext[i]) == 0) {
            *raw = rawtext[i];
            return S_RAW;
        }
    return S_DATA;
}

static void emit_tag(html_tokenizer *t)
{
    attr_finish(t);
    if (t->state == S_STOPPED)
        return;
    t->state = S_DATA;
    const char *name = t->buf;
    if (t->is_end) {
        if (!t->overlong && t->ops.end_tag)
            t->ops.end_tag(t->ctx, name);
        return;
    }
    if (2 * t->natt + 1 > t->ptr_cap) {
        t->ptr_cap = 2 * t->natt + 1;
        t->ptrs = xrealloc(t->ptrs, t->ptr_cap * sizeof *t->ptrs);
    }
    for (size_t i = 0; i < t->natt; i++) {
        t->ptrs[2 * i] = t->buf + t->atts[i].name;
        t->ptrs[2 * i + 1] = t->buf + t->atts[i].value;
    }
    t->ptrs[2 * t->natt] = NULL;
    enum state next = text_state(name, &t->raw);
    t->ops.start_tag(t->ctx, name, t->ptrs, t->self_closing);
    if (t->state != S_STOPPED)
        t->state = next;
}

/* ---- raw text ---------------------------------------------------------------- */

static void raw_out(html_tokenizer *t, const char *s, size_t n)
{
    if (n > 0 && t->raw && t->ops.raw_text && t->state != S_STOPPED)
        t->ops.raw_text(t->ctx, t->raw, s, n);
}

static void end_candidate(html_tokenizer *t, enum state ret)
{
    t->ret = ret;
    t->match = 0;
    memcpy(t->cand, "</", 2);
    t->cand_len = 2;
    t->state = S_RAW_END_NAME;
}

/* The appropriate end tag's name state: c after "</" and t->match bytes of t->raw.
 * Returns whether c was consumed. */
static bool end_name_byte(html_tokenizer *t, unsigned char c)
{
    size_t len = strlen(t->raw);
    if (t->match < len && lower(c) == t->raw[t->match]) {
        t->cand[t->cand_len++] = (char)c;
        t->match++;
        return true;
    }
    if (t->match == len && (is_ws(c) || c == '/' || c == '>')) {
        tag_begin(t, true);
        buf_put(t, t->raw, len);
        tag_name_done(t);
        t->tag_bytes = 2 + len;
        if (c == '>')
            emit_tag(t);
        else
            t->state = c == '/' ? S_SELF_CLOSING : S_BEFORE_ATTR_NAME;
        return true;
    }
    t->state = t->ret; /* not its end tag: text, c included */
    if (t->ret == S_RAW)
        raw_out(t, t->cand, t->cand_len);
    return false;
}

/* ---- the states ---------------------------------------------------------------- */

/* "<!" and what follows, one byte at a time: "--" is a comment, "doctype" (any case)
 * a DOCTYPE, "[CDATA[" (outside foreign content) and anything else a bogus
 * comment. Only the last byte can be a '>' (none of the three holds one). */
static void markup_decl_byte(html_tokenizer *t, unsigned char c)
{
    t->decl[t->decl_len++] = lower(c);
    static const char *const opens[] = {"--", "doctype", "[cdata["};
    bool prefix = false;
    for (size_t i = 0; i < 3; i++) {
        size_t len = strlen(opens[i]);
        if (t->decl_len > len || memcmp(t->decl, opens[i], t->decl_len) != 0)
            continue;
        if (t->decl_len == len) {
            t->state = i == 0 ? S_COMMENT_START : i == 1 ? S_DOCTYPE : S_BOGUS;
            t->tag_bytes = 2 + len;
            return;
        }
        prefix = true;
    }
    if (!prefix)
        t->state = c == '>' ? S_DATA : S_BOGUS;
}

/* Bytes of a tag count against max_tag; past it the tokenizer stops. */
static bool tag_byte(html_tokenizer *t, size_t n)
{
    t->tag_bytes += n;
    if (t->tag_bytes <= t->max_tag)
        return true;
    if (t->is_end) {
        t->overlong = true;
        return true;
    }
    t->state = S_STOPPED;
    return false;
}

/* A quoted attribute value up to its quote q: returns the bytes used. */
static size_t quoted_value(html_tokenizer *t, const char *d, size_t n, char q)
{
    const char *end = memchr(d, q, n);
    size_t run = end ? (size_t)(end - d) : n;
    if (!tag_byte(t, run + (end != NULL)))
        return n;
    value_put(t, d, run);
    if (end) {
        attr_finish(t);
        t->state = S_AFTER_VALUE_QUOTED;
        return run + 1;
    }
    return run;
}

/* The states within a tag, for one byte c: returns whether it was consumed (false:
 * reconsume it in the new state). */
static bool tag_state_byte(html_tokenizer *t, unsigned char c)
{
    switch (t->state) {
    case S_TAG_NAME:
        if (is_ws(c) || c == '/' || c == '>') {
            tag_name_done(t);
            t->state = S_BEFORE_ATTR_NAME;
            return is_ws(c);
        }
        name_byte(t, c);
        return true;
    case S_BEFORE_ATTR_NAME:
        if (is_ws(c))
            return true;
        if (c == '/' || c == '>') {
            t->state = S_AFTER_ATTR_NAME;
            return false;
        }
        attr_begin(t);
        t->state = S_ATTR_NAME;
        if (c == '=') {
            name_byte(t, c);
            return true;
        }
        return false;
    case S_ATTR_NAME:
        if (is_ws(c) || c == '/' || c == '>' || c == '=') {
            attr_name_done(t);
            if (t->state == S_STOPPED)
                return true;
            t->state = c == '=' ? S_BEFORE_ATTR_VALUE : S_AFTER_ATTR_NAME;
            return c == '=';
        }
        name_byte(t, c);
        return true;
    case S_AFTER_ATTR_NAME:
        if (is_ws(c))
            return true;
        if (c == '/')
            t->state = S_SELF_CLOSING;
        else if (c == '=')
            t->state = S_BEFORE_ATTR_VALUE;
        else if (c == '>')
            emit_tag(t);
        else {
            attr_begin(t);
            t->state = S_ATTR_NAME;
            return false;
        }
        return true;
    case S_BEFORE_ATTR_VALUE:
        if (is_ws(c))
            return true;
        if (c == '>') {
            emit_tag(t);
            return true;
        }
        value_begin(t);
        t->state = c == '"' ? S_VALUE_DQ : c == '\'' ? S_VALUE_SQ : S_VALUE_UNQ;
        return c == '"' || c == '\'';
    case S_VALUE_UNQ:
        if (is_ws(c)) {
            attr_finish(t);
            t->state = S_BEFORE_ATTR_NAME;
        } else if (c == '>') {
            emit_tag(t);
        } else {
            char b = (char)c;
            value_put(t, &b, 1);
        }
        return true;
    case S_AFTER_VALUE_QUOTED:
        if (is_ws(c))
            t->state = S_BEFORE_ATTR_NAME;
        else if (c == '/')
            t->state = S_SELF_CLOSING;
        else if (c == '>')
            emit_tag(t);
        else {
            t->state = S_BEFORE_ATTR_NAME;
            return false;
        }
        return true;
    case S_SELF_CLOSING:
        if (c == '>') {
            t->self_closing = true;
            emit_tag(t);
            return true;
        }
        t->state = S_BEFORE_ATTR_NAME;
        return false;
    default: return true;
    }
}

/* The comment states, for one byte c (13.2.5.43 to 13.2.5.52: the less-than-sign
 * states only report nesting, they do not move the end). */
static bool comment_byte(html_tokenizer *t, unsigned char c)
{
    switch (t->state) {
    case S_COMMENT_START:
    case S_COMMENT_START_DASH:
        if (c == '>') {
            t->state = S_DATA;
            return true;
        }
        if (c == '-') {
            t->state = t->state == S_COMMENT_START ? S_COMMENT_START_DASH : S_COMMENT_END;
            return true;
        }
        t->state = S_COMMENT;
        return false;
    case S_COMMENT_END_DASH: t->state = c == '-' ? S_COMMENT_END : S_COMMENT; return c == '-';
    case S_COMMENT_END:
        if (c == '>')
            t->state = S_DATA;
        else if (c == '!')
            t->state = S_COMMENT_END_BANG;
        else if (c != '-') {
            t->state = S_COMMENT;
            return false;
        }
        return true;
    case S_COMMENT_END_BANG:
        if (c == '-')
            t->state = S_COMMENT_END_DASH;
        else if (c == '>')
            t->state = S_DATA;
        else {
            t->state = S_COMMENT;
            return false;
        }
        return true;
    default: return true;
    }
}

/* The script data states after a '<' or a '-' (13.2.5.15 to 13.2.5.31), for one byte c.
 * Returns whether c was consumed. */
static bool script_byte(html_tokenizer *t, unsigned char c)
{
    switch (t->state) {
    case S_SCRIPT_LT:
        if (c == '/') {
            end_candidate(t, S_SCRIPT);
            return true;
        }
        t->state = c == '!' ? S_SCRIPT_ESC_START : S_SCRIPT;
        return c == '!';
    case S_SCRIPT_ESC_START:
    case S_SCRIPT_ESC_START_DASH:
        if (c != '-') {
            t->state = S_SCRIPT;
            return false;
        }
        t->state =
            t->state == S_SCRIPT_ESC_START ? S_SCRIPT_ESC_START_DASH : S_SCRIPT_ESC_DASH_DASH;
        return true;
    case S_SCRIPT_ESC_DASH:
    case S_SCRIPT_ESC_DASH_DASH:
        if (c == '-')
            t->state = S_SCRIPT_ESC_DASH_DASH;
        else if (c == '<')
            t->state = S_SCRIPT_ESC_LT;
        else
            t->state = c == '>' && t->state == S_SCRIPT_ESC_DASH_DASH ? S_SCRIPT : S_SCRIPT_ESC;
        return true;
    case S_SCRIPT_ESC_LT:
        if (c == '/') {
            end_candidate(t, S_SCRIPT_ESC);
            return true;
        }
        t->temp_len = 0;
        t->state = is_alpha(c) ? S_SCRIPT_DESC_START : S_SCRIPT_ESC;
        return false;
    case S_SCRIPT_DESC_START:
    case S_SCRIPT_DESC_END: {
        bool start = t->state == S_SCRIPT_DESC_START;
        if (is_ws(c) || c == '/' || c == '>') {
            bool script = t->temp_len == 6 && memcmp(t->temp, "script", 6) == 0;
            t->state = script == start ? S_SCRIPT_DESC : S_SCRIPT_ESC;
            return true;
        }
        if (is_alpha(c)) {
            if (t->temp_len < sizeof t->temp)
                t->temp[t->temp_len++] = lower(c);
            return true;
        }
        t->state = start ? S_SCRIPT_ESC : S_SCRIPT_DESC;
        return false;
    }
    case S_SCRIPT_DESC_DASH:
    case S_SCRIPT_DESC_DASH_DASH:
        if (c == '-')
            t->state = S_SCRIPT_DESC_DASH_DASH;
        else if (c == '<')
            t->state = S_SCRIPT_DESC_LT;
        else
            t->state = c == '>' && t->state == S_SCRIPT_DESC_DASH_DASH ? S_SCRIPT : S_SCRIPT_DESC;
        return true;
    case S_SCRIPT_DESC_LT:
        if (c == '/') {
            t->temp_len = 0;
            t->state = S_SCRIPT_DESC_END;
            return true;
        }
        t->state = S_SCRIPT_DESC;
        return false;
    default: return true;
    }
}

/* The first '-' or '<' in d[0..n), or n. */
static size_t dash_or_lt(const char *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (d[i] == '-' || d[i] == '<')
            return i;
    return n;
}

/* The states that skip text: returns the bytes of d[0..n) used. */
static size_t skip_states(html_tokenizer *t, const char *d, size_t n)
{
    const char *p;
    size_t k;
    switch (t->state) {
    case S_DATA:
        p = memchr(d, '<', n);
        if (!p)
            return n;
        t->state = S_TAG_OPEN;
        return (size_t)(p - d) + 1;
    case S_BOGUS:
        p = memchr(d, '>', n);
        if (!p)
            return n;
        t->state = S_DATA;
        return (size_t)(p - d) + 1;
    case S_DOCTYPE:
        p = memchr(d, '>', n);
        k = p ? (size_t)(p - d) + 1 : n;
        t->tag_bytes += k;
        if (t->tag_bytes > t->max_tag)
            t->state = S_STOPPED; /* libxml2 stops there too */
        else if (p)
            t->state = S_DATA;
        return k;
    case S_COMMENT:
        p = memchr(d, '-', n);
        if (!p)
            return n;
        t->state = S_COMMENT_END_DASH;
        return (size_t)(p - d) + 1;
    case S_RAW:
    case S_SCRIPT:
        p = memchr(d, '<', n);
        k = p ? (size_t)(p - d) : n;
        if (t->state == S_RAW)
            raw_out(t, d, k); /* a '<' goes out once it is known not to end the text */
        if (p)
            t->state = t->state == S_RAW ? S_RAW_LT : S_SCRIPT_LT;
        return k + (p != NULL);
    case S_SCRIPT_ESC:
    case S_SCRIPT_DESC:
        k = dash_or_lt(d, n);
        if (k == n)
            return n;
        if (t->state == S_SCRIPT_ESC)
            t->state = d[k] == '-' ? S_SCRIPT_ESC_DASH : S_SCRIPT_ESC_LT;
        else
            t->state = d[k] == '-' ? S_SCRIPT_DESC_DASH : S_SCRIPT_DESC_LT;
        return k + 1;
    case S_PLAINTEXT:
    default: return n;
    }
}

/* One step of the state machine on d[0..n) (n > 0): returns the bytes used. */
static size_t step(html_tokenizer *t, const char *d, size_t n)
{
    unsigned char c = (unsigned char)d[0];
    switch (t->state) {
    case S_TAG_OPEN:
        if (c == '!') {
            t->decl_len = 0;
            t->state = S_MARKUP_DECL;
        } else if (c == '/') {
            t->state = S_END_TAG_OPEN;
        } else if (is_alpha(c)) {
            tag_begin(t, false);
            t->tag_bytes = 1;
            t->state = S_TAG_NAME;
            return 0;
        } else {
            t->state = c == '?' ? S_BOGUS : S_DATA;
            return 0;
        }
        return 1;
    case S_END_TAG_OPEN:
        if (is_alpha(c)) {
            tag_begin(t, true);
            t->tag_bytes = 2;
            t->state = S_TAG_NAME;
            return 0;
        }
        t->state = c == '>' ? S_DATA : S_BOGUS;
        return c == '>';
    case S_MARKUP_DECL: markup_decl_byte(t, c); return 1;
    case S_TAG_NAME:
    case S_BEFORE_ATTR_NAME:
    case S_ATTR_NAME:
    case S_AFTER_ATTR_NAME:
    case S_BEFORE_ATTR_VALUE:
    case S_VALUE_UNQ:
    case S_AFTER_VALUE_QUOTED:
    case S_SELF_CLOSING: {
        if (t->tag_bytes >= t->max_tag && !t->is_end) {
            t->state = S_STOPPED; /* this byte would make the tag too long */
            return n;
        }
        bool used = tag_state_byte(t, c);
        t->tag_bytes += used;
        return used;
    }
    case S_VALUE_DQ:
    case S_VALUE_SQ: return quoted_value(t, d, n, t->state == S_VALUE_DQ ? '"' : '\'');
    case S_COMMENT_START:
    case S_COMMENT_START_DASH:
    case S_COMMENT_END_DASH:
    case S_COMMENT_END:
    case S_COMMENT_END_BANG: return comment_byte(t, c);
    case S_RAW_LT:
        if (c == '/') {
            end_candidate(t, S_RAW);
            return 1;
        }
        t->state = S_RAW;
        raw_out(t, "<", 1);
        return 0;
    case S_RAW_END_NAME: return end_name_byte(t, c);
    case S_SCRIPT_LT:
    case S_SCRIPT_ESC_START:
    case S_SCRIPT_ESC_START_DASH:
    case S_SCRIPT_ESC_DASH:
    case S_SCRIPT_ESC_DASH_DASH:
    case S_SCRIPT_ESC_LT:
    case S_SCRIPT_DESC_START:
    case S_SCRIPT_DESC_DASH:
    case S_SCRIPT_DESC_DASH_DASH:
    case S_SCRIPT_DESC_LT:
    case S_SCRIPT_DESC_END: return script_byte(t, c);
    case S_STOPPED: return n;
    default: return skip_states(t, d, n);
    }
}

void html_tokenizer_feed(html_tokenizer *t, const char *data, size_t len)
{
    while (len > 0 && t->state != S_STOPPED) {
        size_t used = step(t, data, len);
        data += used;
        len -= used;
    }
}

void html_tokenizer_finish(html_tokenizer *t)
{
    if (t->state == S_STOPPED)
        return;
    /* EOF inside a raw-text element ends it; inside a tag drops the tag. */
    bool raw = t->raw && t->state >= S_RAW && t->state <= S_SCRIPT_DESC_END;
    if (t->state == S_RAW_END_NAME && t->ret == S_RAW)
        raw_out(t, t->cand, t->cand_len);
    else if (t->state == S_RAW_LT)
        raw_out(t, "<", 1);
    if (raw && t->ops.end_tag)
        t->ops.end_tag(t->ctx, t->raw);
    t->state = S_STOPPED;
}
