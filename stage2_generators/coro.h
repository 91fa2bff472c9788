/* coro.h — generator coroutines in C, built from Duff's device (Adam Dunkels'
 * protothreads, lc-switch.h). Stage 2 of the chapter: "How Python Generators Work",
 * "Building Coroutines With Generators", "Factoring Coroutines With yield from".
 *
 * THE TRICK, ONCE. A C function cannot stop in the middle and later go on from there:
 * returning throws its stack frame away. But a `switch` may jump to a `case` label
 * placed anywhere inside its body, even inside a loop or an `if` (that is Duff's
 * device). So a coroutine body is written as one big switch on a saved line number:
 *
 *     switch (co->line) {            // CORO_BEGIN: jump to where we left off
 *     case 0:                        //   0 = not started (Python: f_lasti == -1)
 *         ...
 *         co->line = __LINE__;       // AWAIT: remember this spot,
 *         return CORO_SUSPENDED;     //   give control back to the Task...
 *     case __LINE__:                 //   ...and the next call lands here
 *         ...
 *     }
 *
 * `co->line` is our `gi_frame.f_lasti`: print it in gdb (`p co->line`) and watch it
 * change as the coroutine pauses at each await.
 *
 * Each resume is a fresh call of the body function, so everything a coroutine keeps
 * across an await lives in a frame struct on the HEAP — the chapter's point that
 * Python's generator frames live on the heap and can outlive the call that made them.
 * Each coroutine declares its frame, the coro part first:
 *
 *     typedef struct { coro co; int fd; long total; } read_all_frame;
 *
 * WHAT THE TRICK CANNOT DO (said once, here; Dunkels' lc-switch.h says the same of
 * protothreads). The compiler checks none of it except the second rule:
 *   - Locals do not survive an await. After a suspension the body is entered afresh
 *     and jumps past the declarations, initializers included, so a C local holds
 *     garbage: this is the chapter's loss of the stack frame. Keep state in the frame
 *     (`f->fd`); a local is fine between two awaits, declared in a { block } that ends
 *     before the next one.
 *   - One await per source line: the resume label is `case __LINE__`, and two awaits
 *     on one line are a duplicate case (a compile error).
 *   - No await inside a `switch` of the body. Its `case __LINE__` would belong to the
 *     inner switch, not to CORO_BEGIN's: the resume would find no label and skip to
 *     the end of the body, silently. Use if / else around awaits instead.
 *
 * AWAITING. A coroutine waits for a Future with AWAIT_FUTURE (the chapter's
 * `yield from future`) and delegates to a sub-coroutine with AWAIT (`yield from
 * coro`). The Task resumes the outermost frame with coro_send (the chapter's
 * `coro.send`); its body, at its AWAIT, calls the child's body, and so on down to the
 * frame that waits: the chain of C calls fetch → read_all → read is the chain of
 * `yield from`s, and it is visible in a debugger's backtrace. The frame that must wait
 * keeps its future in `co->waiting` and every frame returns CORO_SUSPENDED up the
 * chain; coro_send hands that future to the Task, which asks to be stepped when it
 * resolves, as the chapter's Task.step does. When a child returns, its result is in
 * `co->value`; when it raises, the error passes up the chain unless the parent catches
 * it (AWAIT_CATCH), like try/except around `yield from`.
 *
 * Frames are freed by whoever awaited them; a frame's `finally` hook (its def's
 * `finally`) runs first, whether the coroutine returned, raised or was cancelled.
 */
#ifndef CRAWL_CORO_H
#define CRAWL_CORO_H

#include <stddef.h>
#include <stdio.h>

typedef struct coro coro;
typedef struct task task;
typedef struct future future;

/* What a Future resolves to and a coroutine returns: a pointer and/or a number
 * (a chunk is {bytes, length}; a connected socket is {NULL, fd}). */
typedef struct coro_value {
    void *p;
    long long n;
} coro_value;

/* Error kinds, printed like Python's exception classes. */
typedef enum {
    CORO_ERROR = 0, /* "Exception" */
    CORO_OSERROR,   /* "OSError" (errnum holds errno) */
    CORO_TIMEOUT,   /* "TimeoutError" */
    CORO_CANCELLED, /* "CancelledError" */
} coro_error_kind;

/* One line of a traceback. */
typedef struct coro_tb_entry {
    const char *file;
    int line;
    const char *func;
} coro_tb_entry;

/* An exception: its kind, message, and the chain of frames it was raised through,
 * captured when raised (outermost first), so it survives the frames being freed. */
typedef struct coro_error {
    coro_error_kind kind;
    int errnum;
    char *msg;
    size_t ntb;
    coro_tb_entry *tb;
} coro_error;

/* The body of a coroutine: runs until it awaits something not yet done
 * (CORO_SUSPENDED) or until it returns or raises (CORO_FINISHED). */
enum { CORO_SUSPENDED = 0, CORO_FINISHED = 1 };
typedef int (*coro_body)(coro *co);

/* A coroutine function: what the chapter's generator function is to its generators. */
typedef struct coro_def {
    const char *name; /* for tracebacks: "fetch" */
    const char *file; /* __FILE__ */
    coro_body body;
    void (*finally)(coro *co); /* cleanup when the frame is freed; may be NULL */
    size_t frame_size;         /* sizeof the frame struct, whose first member is a coro */
} coro_def;

/* The part of every frame the machinery uses. */
struct coro {
    const coro_def *def;
    int line;         /* resume point: 0 = not started (f_lasti) */
    coro *parent;     /* the frame awaiting this one (f_back) */
    coro *child;      /* the sub-coroutine this one awaits (yield from) */
    future *waiting;  /* the future this frame awaits, if any */
    task *task;       /* the Task driving the chain (set by it; coro.c only
                               passes it down to children) */
    coro_value value; /* result of the last await; the return value when done */
    coro_error *err;  /* the error being raised, caught after AWAIT_CATCH, or
                               thrown in by coro_throw while the frame waits */
};

/* Allocate a zeroed frame for def (a "generator object": nothing runs yet). */
coro *coro_new(const coro_def *def);
/* Run the finally hook, free any child still attached and the frame itself. */
void coro_free(coro *co);

/* The chapter's `coro.send()`: resume co, which runs down its chain of awaits until
 * a frame must wait for a future that is not resolved yet, or until co finishes.
 * Returns that future (what a Python generator yields: the Task's `next_future`),
 * or NULL when co has finished, its return value in co->value or its error in
 * co->err. Nothing is sent in: the waiting frame reads the result from its future. */
future *coro_send(coro *co);
/* The future co's chain waits on (the last one coro_send returned), or NULL if co is
 * not suspended. */
future *coro_waiting(const coro *co);
/* The chapter's `coro.throw()`, in two steps: the next coro_send raises e (taken
 * over) at the await where co's chain waits, as if its future had failed. co must be
 * suspended; nothing runs now. */
void coro_throw(coro *co, coro_error *e);

/* Make an error (message printf-style), with no traceback yet. */
coro_error *coro_error_new(coro_error_kind kind, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void coro_error_free(coro_error *e);
/* "ConnectionRefusedError"-style class name of the error, Python's spelling. */
const char *coro_error_class(const coro_error *e);
/* Print like Python: "Traceback (most recent call last):", the frames, the error. */
void coro_error_print(const coro_error *e, FILE *out);
/* One line "OSError: [Errno 111] Connection refused" into buf. */
const char *coro_error_line(const coro_error *e, char *buf, size_t len);

/* Internal steps of the macros below (not for direct use): each returns
 * CORO_SUSPENDED, or CORO_FINISHED with the outcome in co->value or co->err. */
int coro_await_child_(coro *co);
int coro_await_future_(coro *co, future *f);
int coro_raise_(coro *co, coro_error *e);

/* ---- The macros. Each is used inside a body function of the form
 *
 *     static int read_all_body(coro *co) {
 *         read_all_frame *f = (read_all_frame *)co;
 *         CORO_BEGIN(co);
 *         ...
 *         CORO_RETURN(co, value);
 *         CORO_END(co);
 *     }
 */

/* The resume label follows a store into co->line; tell the compiler the fall
 * into it is meant. */
#define CORO_FALLTHROUGH_ __attribute__((fallthrough))

/* Open the switch that jumps to the saved resume point. */
#define CORO_BEGIN(co)                                                                             \
    switch ((co)->line) {                                                                          \
    case 0:

/* Close it. Falling off the end returns a zero value, like a bare Python `return`. */
#define CORO_END(co)                                                                               \
    }                                                                                              \
    (co)->value = (coro_value){0, 0};                                                              \
    return CORO_FINISHED

/* Await a sub-coroutine, catching what it raises: the `except` of a try/except around
 * `yield from coro`. Start the child frame `child_expr`, run it until it suspends or
 * finishes, and suspend with it as long as it is suspended. When it returns, its
 * return value is in co->value. When it raises, the error is left in co->err for the
 * code after the await to inspect; the handler must coro_error_free(co->err) and set
 * it to NULL (or re-raise it with CORO_RAISE_ERR). */
#define AWAIT_CATCH(co, child_expr)                                                                \
    do {                                                                                           \
        (co)->child = (child_expr);                                                                \
        (co)->line = __LINE__;                                                                     \
        CORO_FALLTHROUGH_;                                                                         \
    case __LINE__:                                                                                 \
        if (coro_await_child_(co) == CORO_SUSPENDED)                                               \
            return CORO_SUSPENDED;                                                                 \
    } while (0)

/* Await a sub-coroutine (the chapter's `yield from coro`): AWAIT_CATCH, but an error
 * the child raises propagates: this frame finishes too, raising the same error. */
#define AWAIT(co, child_expr)                                                                      \
    do {                                                                                           \
        AWAIT_CATCH(co, child_expr);                                                               \
        if ((co)->err)                                                                             \
            return CORO_FINISHED;                                                                  \
    } while (0)

/* Await a Future, catching its error into co->err (as AWAIT_CATCH does). A future
 * that is already resolved does not suspend at all (footnote 9's fix); else the frame
 * keeps it in co->waiting and suspends. Its result lands in co->value; a failed or
 * cancelled future raises its error here, and so does an error thrown in while the
 * frame waits (coro_throw: a cancellation of the Task). */
#define AWAIT_FUTURE_CATCH(co, fut)                                                                \
    do {                                                                                           \
        (co)->line = __LINE__;                                                                     \
        CORO_FALLTHROUGH_;                                                                         \
    case __LINE__:                                                                                 \
        if (coro_await_future_((co), (fut)) == CORO_SUSPENDED)                                     \
            return CORO_SUSPENDED;                                                                 \
    } while (0)

/* Await a Future (the chapter's `yield from future`, Future.__iter__): the same, the
 * error propagating. */
#define AWAIT_FUTURE(co, fut)                                                                      \
    do {                                                                                           \
        AWAIT_FUTURE_CATCH(co, fut);                                                               \
        if ((co)->err)                                                                             \
            return CORO_FINISHED;                                                                  \
    } while (0)

/* Return a value to whoever awaits this coroutine (Python: `return x`, carried by
 * StopIteration). */
#define CORO_RETURN(co, ...)                                                                       \
    do {                                                                                           \
        (co)->value = (coro_value){__VA_ARGS__};                                                   \
        return CORO_FINISHED;                                                                      \
    } while (0)

/* Raise an exception here: kind, errno (or 0), printf-style message. The traceback
 * is taken now, through this frame's line. */
#define CORO_RAISE(co, kind, errnum, ...)                                                          \
    do {                                                                                           \
        (co)->line = __LINE__;                                                                     \
        return coro_raise_((co), coro_error_new((kind), (errnum), __VA_ARGS__));                   \
    } while (0)

/* Re-raise an error caught with AWAIT_CATCH (co->err). */
#define CORO_RAISE_ERR(co)                                                                         \
    do {                                                                                           \
        coro_error *e_ = (co)->err;                                                                \
        (co)->err = NULL;                                                                          \
        return coro_raise_((co), e_);                                                              \
    } while (0)

/* The saved resume line of a frame: the analogue of gi_frame.f_lasti. */
static inline int coro_lasti(const coro *co)
{
    return co->line;
}

#endif
