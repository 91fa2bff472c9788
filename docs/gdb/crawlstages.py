# crawlstages.py — gdb commands that know the course's objects, in the spirit of
# CPython's Tools/gdb/libpython.py (py-bt, py-list, its pretty-printers). Every
# docs/gdb/*.gdb file loads it; by hand:  (gdb) source docs/gdb/crawlstages.py
#
#   info tasks              every live Task, its state, and its chain of coroutine
#                           frames, each with the saved resume line (stage 2 and 3)
#   coro-bt [TASK|FRAME]    that chain as a Python traceback, outermost first, with
#                           each line's source; the current Task by default (the one
#                           whose coroutine is on the C stack). TASK: a number of
#                           `info tasks`, or a name; FRAME: a coro * expression
#   coro-list [FRAME]       the source around a frame's resume line (py-list)
#   info fetchers           every live Fetcher: URL, state, bytes so far (stage 1)
#   frames-svg FILE [TITLE] the C stack and the heap's Tasks, coroutine frames, their
#                           fields and Futures (or Fetchers), drawn as one SVG
#   p *co, p *t, p *fut, p *q, p *f
#                           a coroutine frame (header and locals), Task, Future,
#                           Queue or Fetcher printed like the chapter's objects
#
# It only reads the program's memory: nothing here calls a function of the program
# (gdb 13 cannot finish such a call on CPUs with AMX; docs/debugging.md). The same
# walk in C is task_dump_all (task.c), which `kill -USR1 PID` prints.
import os

import gdb
import gdb.printing

# ---- reading the program ----------------------------------------------------------------


def _tag(t):
    t = t.strip_typedefs()
    return t.tag if t.code in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION) else None


def _target_tag(v):
    t = v.type.strip_typedefs()
    return _tag(t.target()) if t.code == gdb.TYPE_CODE_PTR else None


def _cstr(v, limit=300):
    if int(v) == 0:
        return None
    try:
        return v.string(errors="replace")[:limit]
    except (gdb.MemoryError, gdb.error):
        return "<unreadable %s>" % hex(int(v))


def _fields(v):
    """The field names of a struct value or of the struct a pointer points to."""
    t = v.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_PTR:
        t = t.target().strip_typedefs()
    return {f.name for f in t.fields()}


def _function_at(addr):
    """The name of the function at addr (a function pointer's value)."""
    try:
        block = gdb.block_for_pc(int(addr))
    except RuntimeError:
        block = None
    while block is not None and block.function is None:
        block = block.superblock
    return block.function if block is not None else None


def _registry(anchor, elem_tag):
    """The live objects of a registry: the file that defines function `anchor` keeps
    them in a static list (list.h: a list_node whose nodes are members of elem_tag
    structs). Yields pointers to the elements, oldest first."""
    sym = gdb.lookup_global_symbol(anchor) or gdb.lookup_static_symbol(anchor)
    if sym is None or sym.symtab is None:
        return
    head = None
    for s in sym.symtab.static_block():
        if s.is_variable and _tag(s.type) == "list_node":
            head = s.value()
            break
    if head is None:
        return
    elem = gdb.lookup_type("struct " + elem_tag)
    member = next((f for f in elem.fields() if _tag(f.type) == "list_node"), None)
    if member is None:
        return
    off = member.bitpos // 8
    end = int(head.address)
    node = head["next"]
    seen = 0
    while int(node) not in (end, 0) and seen < 1000000:   # 0: not initialized yet
        yield gdb.Value(int(node) - off).cast(elem.pointer())
        node = node["next"]
        seen += 1


def live_tasks():
    return list(_registry("task_new", "task"))


def live_fetchers():
    return list(_registry("fetcher_new", "Fetcher"))


def future_state(fut):
    return {0: "pending", 1: "done", 2: "failed", 3: "cancelled"}.get(int(fut["state"]), "?")


def task_name(t):
    return _cstr(t["name"]) or "?"


def chain(co):
    """The frames from co's outermost parent down to its innermost child."""
    top = co
    while int(top["parent"]) != 0:
        top = top["parent"]
    frames, c = [], top
    while int(c) != 0 and len(frames) < 1000:
        frames.append(c)
        c = c["child"]
    return frames


def task_chain(t):
    return chain(t["coro"]) if int(t["coro"]) != 0 else []


def coro_name(c):
    return _cstr(c["def"]["name"]) or "?"


def coro_file(c):
    return _cstr(c["def"]["file"]) or "?"


def coro_source(c):
    """The full path of the source file of c's body, and its symtab."""
    fn = _function_at(c["def"]["body"])
    if fn is None or fn.symtab is None:
        return None
    return fn.symtab.fullname()


def source_lines(path, first, last):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    return [(n, lines[n - 1]) for n in range(max(first, 1), min(last, len(lines)) + 1)]


def frame_line(c, extra=()):
    """'File "x.c", line N, in name' and what the frame is doing."""
    line = int(c["line"])
    notes = []
    if int(c["waiting"]) != 0:
        notes.append("waiting on a future")
    elif line == 0:
        notes.append("not started")
    notes += extra
    return 'File "%s", line %d, in %s%s' % (coro_file(c), line, coro_name(c),
                                             "  <- " + ", ".join(notes) if notes else "")


def dump_task(t, out):
    """What task_dump (task.c) prints."""
    out.append("Task '%s' (%s)" % (task_name(t), future_state(t["fut"])))
    for c in task_chain(t):
        out.append("  " + frame_line(c))


ERRNO_NAMES = {111: "ConnectionRefusedError", 104: "ConnectionResetError",
               110: "TimeoutError", 32: "BrokenPipeError"}


def error_line(e):
    """An exception as Python prints its last line (coro_error_line)."""
    kind = int(e["kind"])
    cls = {1: "OSError", 2: "TimeoutError", 3: "CancelledError"}.get(kind, "Exception")
    msg = _cstr(e["msg"]) or ""
    if kind == 1 and int(e["errnum"]):
        return "%s: [Errno %d] %s" % (cls, int(e["errnum"]), msg)
    return "%s: %s" % (cls, msg)


# ---- the commands --------------------------------------------------------------------------


def current_coro():
    """The coroutine frame the selected C frame (or one of its callers) is running."""
    f = gdb.selected_frame()
    while f is not None:
        for name in ("co", "t"):
            try:
                v = f.read_var(name)
            except (ValueError, RuntimeError):
                continue
            if _target_tag(v) == "coro" and int(v) != 0:
                return v, f
            if _target_tag(v) == "task" and int(v) != 0 and int(v["coro"]) != 0:
                return v["coro"], f
        f = f.older()
    return None, None


def c_frames_of(frames):
    """For each coroutine frame running on the C stack, the gdb frame running its body."""
    body = {int(c): str(_function_at(c["def"]["body"])) for c in frames}
    found = {}
    try:
        f = gdb.newest_frame()
    except gdb.error:
        return found
    while f is not None:
        try:
            co = f.read_var("co")
            if int(co) in body and f.name() == body[int(co)]:
                found[int(co)] = f.level()
        except (ValueError, RuntimeError):
            pass
        f = f.older()
    return found


def resolve(arg):
    """TASK (a number of `info tasks`, or a name) or FRAME (an expression: coro *,
    task *, or a frame struct pointer) -> (task or None, coro or None)."""
    arg = arg.strip()
    if not arg:
        co, _ = current_coro()
        if co is None:
            raise gdb.GdbError("no coroutine on the C stack here: give a Task "
                               "(a number or a name from `info tasks`) or a frame")
        return (co["task"] if int(co["task"]) else None), co
    tasks = live_tasks()
    if arg.isdigit():
        n = int(arg)
        if not 1 <= n <= len(tasks):
            raise gdb.GdbError("no Task %d: `info tasks` lists %d" % (n, len(tasks)))
        return tasks[n - 1], None
    name = arg.strip("'\"")
    by_name = [t for t in tasks if task_name(t) == name]
    if by_name:
        return by_name[0], None
    v = gdb.parse_and_eval(arg)
    tag = _target_tag(v)
    if tag == "task":
        return v, None
    if tag == "coro":
        return (v["task"] if int(v["task"]) else None), v
    if v.type.strip_typedefs().code == gdb.TYPE_CODE_PTR:
        first = v.dereference().type.strip_typedefs().fields()
        if first and first[0].name == "co" and _tag(first[0].type) == "coro":
            co = v["co"].address
            return (co["task"] if int(co["task"]) else None), co
    raise gdb.GdbError("%s is neither a Task nor a coroutine frame" % arg)


class InfoTasks(gdb.Command):
    """Every live Task: its state and its chain of coroutine frames, outermost first,
each with the line it will resume at (0: not started). What task_dump_all (task.c)
and `kill -USR1` print, read from the program's memory."""

    def __init__(self):
        super().__init__("info tasks", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        tasks = live_tasks()
        out = ["%d live task(s):" % len(tasks)]
        for t in tasks:
            dump_task(t, out)
        gdb.write("\n".join(out) + "\n")


class CoroBt(gdb.Command):
    """coro-bt [TASK|FRAME]: the chain of coroutine frames of a Task, outermost first,
like a Python traceback, each with its source line. Without an argument, the Task
whose coroutine runs on the C stack. TASK: its number in `info tasks`, or its name;
FRAME: a coroutine frame (coro *, or a frame struct pointer). A frame whose body is
on the C stack now shows its gdb frame number (for `frame N`)."""

    def __init__(self):
        super().__init__("coro-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        t, co = resolve(arg)
        frames = task_chain(t) if t is not None else chain(co)
        if t is not None and co is not None and int(co) not in [int(c) for c in frames]:
            frames = chain(co)
        oncpu = c_frames_of(frames)
        if t is not None:
            head = "Task '%s' (%s), outermost first:" % (task_name(t), future_state(t["fut"]))
        else:
            head = "Coroutine frames (no Task), outermost first:"
        out = [head]
        for c in frames:
            extra = ["gdb frame #%d" % oncpu[int(c)]] if int(c) in oncpu else []
            out.append("  " + frame_line(c, extra))
            path = coro_source(c)
            if path and int(c["line"]) > 0:
                for _, text in source_lines(path, int(c["line"]), int(c["line"])):
                    out.append("    " + text.strip())
        if not frames:
            out.append("  (no frame: the coroutine has finished)")
        gdb.write("\n".join(out) + "\n")


class CoroList(gdb.Command):
    """coro-list [FRAME]: the source around a coroutine frame's resume line, the line
itself marked with >. Without an argument, the frame the selected C frame runs;
FRAME: a coroutine frame, or a Task (its innermost frame)."""

    def __init__(self):
        super().__init__("coro-list", gdb.COMMAND_FILES)

    def invoke(self, arg, from_tty):
        t, co = resolve(arg)
        if co is None:
            frames = task_chain(t)
            if not frames:
                raise gdb.GdbError("Task '%s' has no frame left" % task_name(t))
            co = frames[-1]
        line = int(co["line"])
        path = coro_source(co)
        if not path:
            raise gdb.GdbError("no source for %s" % coro_name(co))
        if line == 0:
            fn = _function_at(co["def"]["body"])
            line = fn.line if fn is not None else 1
            gdb.write("%s has not started: its body begins at line %d\n" % (coro_name(co), line))
        else:
            gdb.write("%s resumes at %s:%d\n" % (coro_name(co), coro_file(co), line))
        for n, text in source_lines(path, line - 5, line + 5):
            gdb.write("%s%5d  %s\n" % (">" if n == int(co["line"]) else " ", n, text))


FETCHER_STATE_DOC = "connecting, sending, reading, waiting for a descriptor, curl, done"


def fetcher_state(f):
    """What a stage 1 Fetcher is waiting for, from the fields it saved by hand (the
    same as fetcher_state in fetcher.c)."""
    names = _fields(f)

    def get(name, default=0):
        return int(f[name]) if name in names else default

    if get("fd_wait"):
        return "waiting for a free descriptor"
    if get("req"):
        return "transfer (curl)"
    if get("sock", -1) >= 0:
        if not get("connected"):
            return "connecting"
        if get("sent") < get("request_len"):
            return "sending"
        return "reading"
    return "between tries" if get("tries") else "not started"


def fetcher_bytes(f):
    """Body bytes of the response so far: the crawl core's count (crawl_fetch_size)."""
    if "response" in _fields(f) and int(f["response"]) != 0:
        return int(f["response"]["size"])
    return 0


class InfoFetchers(gdb.Command):
    """Every live Fetcher of crawl-callbacks: its URL, what it waits for, the bytes of the
response so far, its try. The callbacks' counterpart of `info tasks`: where a
coroutine leaves a chain of frames, a callback leaves only this object."""

    def __init__(self):
        super().__init__("info fetchers", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        fs = live_fetchers()
        out = ["%d live Fetcher(s):" % len(fs)]
        for f in fs:
            out.append("  " + fetcher_repr(f))
        gdb.write("\n".join(out) + "\n")


def fetcher_repr(f):
    return "Fetcher '%s' %s, %d bytes, try %d" % (_cstr(f["url"]) or "?", fetcher_state(f),
                                                  fetcher_bytes(f), int(f["tries"]))


# ---- pretty-printers ------------------------------------------------------------------------


def frame_type(c):
    """The struct of c's frame (`f` in its body: fetch_frame, ...), or None."""
    fn = _function_at(c["def"]["body"])
    if fn is None:
        return None
    block = gdb.block_for_pc(int(c["def"]["body"]))
    while block is not None:
        for s in block:
            if s.name == "f" and s.type.strip_typedefs().code == gdb.TYPE_CODE_PTR:
                return s.type.target()
        if block.function is not None:
            break
        block = block.superblock
    return None


def coro_repr(c):
    """<coroutine fetch suspended at fetch.c:207, awaiting http_get>, like a generator."""
    line = int(c["line"])
    where = "%s:%d" % (coro_file(c), line)
    if line == 0:
        what = "not started"
    elif int(c["child"]) != 0:
        what = "suspended at %s, awaiting %s" % (where, coro_name(c["child"]))
    elif int(c["waiting"]) != 0:
        what = "suspended at %s, waiting on a future" % where
    else:
        what = "running at %s" % where
    task = ""
    if int(c["task"]) != 0:
        task = " of Task '%s'" % task_name(c["task"])
    return "<coroutine %s %s%s>" % (coro_name(c), what, task)


class CoroPrinter:
    """A coroutine frame: coro (the header) or any frame struct whose first member is
    one. The header's fields, then the frame's own: its locals that survive an await
    (Python's gi_frame.f_locals)."""

    def __init__(self, val):
        if _tag(val.type) == "coro":
            self.co = val
            ftype = frame_type(val) if val.address is not None else None
            self.frame = val.address.cast(ftype.pointer()).dereference() if ftype else None
        else:
            self.co = val["co"]
            self.frame = val

    def to_string(self):
        return coro_repr(self.co)

    def children(self):
        for f in self.co.type.strip_typedefs().fields():
            yield f.name, self.co[f.name]
        if self.frame is not None:
            for f in self.frame.type.strip_typedefs().fields()[1:]:
                yield f.name, self.frame[f.name]


def callbacks_repr(fut):
    n = int(fut["ncb"])
    out = []
    for i in range(min(n, 16)):
        cb = fut["cb"][i] if i < 2 else fut["more"][i - 2]
        fn = _function_at(cb["fn"])
        name = fn.name if fn is not None else hex(int(cb["fn"]))
        # task.c's wakeup: the Task that steps when the future resolves.
        if (fn is not None and fn.symtab is not None and fn.symtab.filename.endswith("task.c")
                and int(cb["arg"]) != 0):
            t = cb["arg"].cast(gdb.lookup_type("struct task").pointer())
            out.append("%s(Task '%s')" % (name, task_name(t)))
        else:
            out.append("%s()" % name)
    if n > 16:
        out.append("...")
    return out


def future_repr(fut):
    """Like asyncio: <Future pending cb=[...]>, <Future finished result=...>."""
    state = int(fut["state"])
    if state == 0:
        cbs = callbacks_repr(fut)
        return "<Future pending%s>" % (" cb=[%s]" % ", ".join(cbs) if cbs else "")
    if state == 1:
        r = fut["result"]
        return "<Future finished result={p=%s, n=%d}>" % (hex(int(r["p"])), int(r["n"]))
    if state == 2:
        e = fut["error"]
        return "<Future finished exception=%s>" % (error_line(e) if int(e) else "?")
    return "<Future cancelled>"


class StructPrinter:
    """A one-line repr as to_string, the struct's own fields as children."""

    def __init__(self, val):
        self.val = val

    def children(self):
        for f in self.val.type.strip_typedefs().fields():
            yield f.name, self.val[f.name]


class FuturePrinter:
    """One line says it all (the callbacks are in it)."""

    def __init__(self, val):
        self.val = val

    def to_string(self):
        return future_repr(self.val)


class TaskPrinter(StructPrinter):
    """Like asyncio: <Task pending name='...' coro=<fetch() running at fetch.c:207>
    wait_for=<Future pending cb=[...]>>."""

    def to_string(self):
        t = self.val
        state = future_state(t["fut"])
        s = "<Task %s name='%s'" % ("pending" if state == "pending" else "finished", task_name(t))
        frames = task_chain(t)
        if frames:
            top = frames[0]
            if int(top["line"]) == 0:
                s += " coro=<%s() not started>" % coro_name(top)
            else:
                s += " coro=<%s() running at %s:%d>" % (coro_name(top), coro_file(top),
                                                         int(top["line"]))
            if int(frames[-1]["waiting"]) != 0:
                s += " wait_for=%s" % future_repr(frames[-1]["waiting"].dereference())
        elif state == "failed" and int(t["fut"]["error"]):
            s += " exception=%s" % error_line(t["fut"]["error"])
        elif state == "cancelled":
            s = s.replace("finished", "cancelled")
        return s + ">"


def _varint(data, i):
    """A varint of jobq.c's records at data[i]: (value, index after it)."""
    v, shift = 0, 0
    while i < len(data) and shift < 64:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return v, i


JOB_ORIGIN = 1  # jobq.c: an origin pointer follows the flags byte


def jobq_urls(jq, limit):
    """The URLs of the first `limit` requests queued in a jobq (jobq.h), oldest first,
    read from its chunks' bytes as jobq_pop decodes them (jobq.c): a flags byte, an
    origin pointer when JOB_ORIGIN is set, three varints (max_redirect, depth, bytes
    shared with the URL before), the rest of the URL and a NUL. The first record to
    read may share bytes with the last URL taken (jq->rd_url)."""
    inferior = gdb.selected_inferior()
    chunk_t = gdb.lookup_type("struct jobq_chunk")
    data_off = chunk_t["data"].bitpos // 8
    ptr_size = gdb.lookup_type("void").pointer().sizeof
    prev = (_cstr(jq["rd_url"], limit=1 << 20) or "").encode("utf-8", "surrogateescape")
    urls, c, chunks = [], jq["head"], 0
    while int(c) != 0 and len(urls) < limit and chunks < 100000:
        chunks += 1
        used, i = int(c["used"]), int(c["read"])
        data = bytes(inferior.read_memory(int(c) + data_off, used)) if used else b""
        while i < used and len(urls) < limit:
            flags = data[i]
            i += 1 + (ptr_size if flags & JOB_ORIGIN else 0)
            _, i = _varint(data, i)  # max_redirect
            _, i = _varint(data, i)  # depth
            same, i = _varint(data, i)
            end = data.find(b"\0", i)
            if end < 0:
                raise ValueError("a record runs past its chunk")
            prev = prev[:same] + data[i:end]
            urls.append(prev.decode("utf-8", "replace"))
            i = end + 1
        c = c["next"]
    return urls


class QueuePrinter(StructPrinter):
    """Like asyncio: <Queue _queue=[...] _getters[N] tasks=N>."""

    def to_string(self):
        q = self.val
        n = int(q["items"]["count"])
        urls = [repr(u) for u in jobq_urls(q["items"], min(n, 5))]
        if n > 5:
            urls.append("... %d more" % (n - 5))
        # getters: a circular list_node line, its head inside the Queue.
        line = q["getters"]
        head, g, getters = int(line.address), line["next"], 0
        while int(g) != head and int(g) != 0 and getters < 100000:
            getters += 1
            g = g["next"]
        s = "<Queue _queue=[%s]" % ", ".join(urls)
        if getters:
            s += " _getters[%d]" % getters
        return s + " tasks=%d>" % int(q["unfinished_tasks"])


class FetcherPrinter(StructPrinter):
    def to_string(self):
        return "<%s>" % fetcher_repr(self.val)


class Guarded:
    """A printer whose to_string says what it could not read instead of raising: a
    pointer cast to the wrong frame type points at anything."""

    def __init__(self, printer):
        self.printer = printer
        if hasattr(printer, "children"):
            self.children = printer.children

    def to_string(self):
        try:
            return self.printer.to_string()
        except (gdb.error, gdb.MemoryError, ValueError, OverflowError) as e:
            return "<unreadable %s: %s>" % (type(self.printer).__name__[:-7], e)


def lookup(val):
    p = _lookup(val)
    return Guarded(p) if p is not None else None


def _lookup(val):
    t = val.type.strip_typedefs()
    if t.code != gdb.TYPE_CODE_STRUCT:
        return None
    tag = t.tag
    if tag == "coro":
        return CoroPrinter(val)
    if tag == "future":
        return FuturePrinter(val)
    if tag == "task":
        return TaskPrinter(val)
    if tag == "queue":
        return QueuePrinter(val)
    if tag == "Fetcher":
        return FetcherPrinter(val)
    fields = t.fields()
    if fields and fields[0].name == "co" and _tag(fields[0].type) == "coro":
        return CoroPrinter(val)
    return None


# ---- frames-svg: a picture of the frames ---------------------------------------------------


def _short(v):
    """A field's value in a few characters: numbers, strings, what a pointer points to."""
    try:
        t = v.type.strip_typedefs()
        if t.code == gdb.TYPE_CODE_PTR:
            if int(v) == 0:
                return "NULL"
            tt = t.target().strip_typedefs()
            if tt.code == gdb.TYPE_CODE_INT and tt.sizeof == 1:
                text = _cstr(v, 40) or ""
                return '"%s"' % "".join(ch if " " <= ch != "\x7f" else "\\x%02x" % ord(ch)
                                        for ch in text.replace("\r", "\\r").replace("\n", "\\n"))
            tag = _tag(tt)
            if tag == "task":
                return "-> Task '%s'" % task_name(v)
            if tag == "coro":
                return "-> frame %s" % coro_name(v)
            if tag == "future":
                return "-> Future (%s)" % future_state(v)
            return "-> %s" % (tag or str(tt))
        if t.code in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION):
            if _tag(t) == "future":
                return "Future (%s)" % future_state(v)
            return "{%s}" % (_tag(t) or "...")
        if t.code == gdb.TYPE_CODE_ARRAY:
            return "[%d bytes]" % t.sizeof
        if t.code == gdb.TYPE_CODE_FLT:
            return "%g" % float(v)
        if t.code == gdb.TYPE_CODE_ENUM:
            return str(v)
        return str(int(v))
    except (gdb.error, gdb.MemoryError, ValueError):
        return "?"


def _struct_lines(v, skip=0, limit=14):
    t = v.type.strip_typedefs()
    out = []
    for f in t.fields()[skip:]:
        if f.name is None:
            continue
        if len(out) == limit:
            out.append("...")
            break
        out.append(("%s = %s" % (f.name, _short(v[f.name])))[:60])
    return out


def frames_model():
    """What frames-svg draws: the C stack (newest first) and the heap's objects, each a
    (title, lines, [(title, lines, on_stack_level)]) box."""
    stack = []
    f = gdb.newest_frame()
    while f is not None and len(stack) < 40:
        sal = f.find_sal()
        where = "%s:%d" % (os.path.basename(sal.symtab.filename), sal.line) if sal.symtab else "[library]"
        stack.append((f.level(), f.name() or "??", where))
        f = f.older()
    if f is not None:
        stack.append((None, "...", "older frames not drawn"))
    boxes = []
    tasks = live_tasks()
    # The Task whose coroutine runs now first: the one the C stack is in.
    running = [t for t in tasks if c_frames_of(task_chain(t))]
    tasks = running + [t for t in tasks if t not in running]
    for t in tasks[:8]:
        frames = task_chain(t)
        on_stack = c_frames_of(frames)
        inner = []
        for c in frames:
            lines = []
            ftype = frame_type(c)
            if ftype is not None:
                lines = _struct_lines(c.cast(ftype.pointer()).dereference(), skip=1)
            if int(c["waiting"]) != 0:
                lines.append("waits on " + future_repr(c["waiting"]))
            title = "%s   %s:%d" % (coro_name(c), coro_file(c), int(c["line"]))
            inner.append((title, lines, on_stack.get(int(c))))
        boxes.append(("Task '%s' (%s)" % (task_name(t), future_state(t["fut"])), [], inner))
    for fe in live_fetchers()[:8]:
        boxes.append(("Fetcher '%s'" % (_cstr(fe["url"]) or "?"),
                      [fetcher_state(fe)] + _struct_lines(fe.dereference(), limit=12), []))
    more = max(len(tasks) - 8, 0) + max(len(live_fetchers()) - 8, 0)
    return stack, boxes, bool(tasks), more


def _esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def frames_svg(title):
    """The SVG of frames_model: the C stack on the left, the heap on the right."""
    stack, boxes, coroutines, more = frames_model()
    line, pad, lw, rw, gap = 15, 6, 430, 600, 30
    out, y = [], 60
    out.append('<text x="10" y="%d" class="h">C stack, newest first (what runs now)</text>' % (y - 10))
    for level, name, where in stack:
        out.append('<rect x="10" y="%d" width="%d" height="%d" class="c"/>' % (y, lw, line + pad))
        label = "#%d %s   %s" % (level, name, where) if level is not None else "%s %s" % (name, where)
        out.append('<text x="16" y="%d">%s</text>' % (y + line, _esc(label)))
        y += line + pad + 2
    left = y
    x0 = 10 + lw + gap
    y = 60
    heading = ("Heap: the Tasks and their coroutine frames" if coroutines
               else "Heap: the Fetchers (all a callback keeps between calls)")
    out.append('<text x="%d" y="%d" class="h">%s</text>' % (x0, y - 10, heading))
    for btitle, blines, inner in boxes:
        top = y
        y += line + pad
        body = []
        for l in blines:
            body.append('<text x="%d" y="%d">%s</text>' % (x0 + 8, y + line - 3, _esc(l)))
            y += line
        for ftitle, flines, level in inner:
            h = (len(flines) + 1) * line + pad
            cls = "f on" if level is not None else "f"
            body.append('<rect x="%d" y="%d" width="%d" height="%d" class="%s"/>' % (x0 + 8, y, rw - 16, h, cls))
            note = "   (running: C frame #%d)" % level if level is not None else ""
            body.append('<text x="%d" y="%d" class="t">%s%s</text>' % (x0 + 14, y + line, _esc(ftitle), note))
            for i, l in enumerate(flines):
                cls = ' class="w"' if l.startswith("waits on") else ""
                body.append('<text x="%d" y="%d"%s>%s</text>' % (x0 + 22, y + line * (i + 2), cls, _esc(l)))
            y += h + 4
        y += pad
        out.append('<rect x="%d" y="%d" width="%d" height="%d" class="b"/>' % (x0, top, rw, y - top))
        out.append('<text x="%d" y="%d" class="t">%s</text>' % (x0 + 6, top + line, _esc(btitle)))
        out += body
        y += 8
    if more:
        out.append('<text x="%d" y="%d">... and %d more</text>' % (x0, y + line, more))
        y += 2 * line
    height = max(left, y) + 20
    width = x0 + rw + 10
    head = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" font-size="12">' % (width, height),
            '<style>.h{font-weight:bold;font-size:13px}.t{font-weight:bold}.w{fill:#a40}'
            '.c{fill:#eef;stroke:#669}.b{fill:#fff;stroke:#333}.f{fill:#efe;stroke:#696}.on{fill:#ffd;stroke:#a80}</style>',
            '<text x="10" y="20" class="h">%s</text>' % _esc(title)]
    return "\n".join(head + out + ["</svg>"]) + "\n", len(stack), len(boxes)


class FramesSvg(gdb.Command):
    """frames-svg FILE [TITLE]: draw, as one SVG, the C stack of the running code and the
heap's live objects — each Task with its coroutine frames, their fields and the
Futures they wait on (stages 2 and 3), or each Fetcher (stage 1). Reads memory only."""

    def __init__(self):
        super().__init__("frames-svg", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if not argv:
            raise gdb.GdbError("usage: frames-svg FILE [TITLE]")
        svg, nstack, nboxes = frames_svg(" ".join(argv[1:]) or "frames")
        with open(argv[0], "w", encoding="utf-8") as fh:
            fh.write(svg)
        gdb.write("frames-svg: %s: %d C frame(s), %d heap object(s)\n" % (argv[0], nstack, nboxes))


InfoTasks()
FramesSvg()
CoroBt()
CoroList()
InfoFetchers()
gdb.pretty_printers[:] = [p for p in gdb.pretty_printers
                          if getattr(p, "__name__", "") != "crawlstages_lookup"]
lookup.__name__ = "crawlstages_lookup"
gdb.pretty_printers.append(lookup)
