#!/usr/bin/env python3
"""check-no-calls.py [ROOT] — no gdb command of the course calls into the program.

gdb evaluates some expressions by running code in the inferior: a function call
(`call f()`, `print f(x)`, `p s->fn(1)`, `output (*fp)()`), and a string literal it
must turn into a pointer (`p name == "a"`, `set var s = "x"`: gdb calls malloc in the
program to hold it). gdb 13.1 cannot finish such a call on CPUs with AMX (Intel
Sapphire Rapids and later): "Couldn't write extended state status", and the program's
registers are left damaged. So the course never asks for one, and this check fails
when one is written down anywhere gdb commands are:

  - every line of *.gdb files, the commands of their `commands`/`define` blocks, and
    the Python of their `python ... end` blocks;
  - in *.py files, the literal commands and expressions given to gdb.execute and
    gdb.parse_and_eval;
  - in *.sh files and CMakeLists.txt, every quoted string and here-document line that
    reads as a gdb command (-ex '...', the guides' lists of commands);
  - in Markdown (docs/ and the exercises' READMEs, README.md), `(gdb) CMD` lines,
    `+CMD` lines of trace-commands transcripts, and inline `code` that reads as a gdb
    command.

Not calls, and allowed: gdb's own convenience functions ($_streq, $_isvoid, ... and
those a Python extension registers: their names are read from the extension), casts,
sizeof, `return`, `finish`, `ptype`/`whatis` (evaluated without side effects), string
literals as printf's format, as a convenience function's argument, as a value for a
convenience variable ($page = "...") or printed alone. `compile` always runs code in
the program and is refused.

Exit 1 with FILE:LINE: COMMAND — WHY for each one found. --selftest checks the
checker on built-in cases (it must flag the calls and pass the rest).
"""
import os
import re
import sys

# gdb's convenience functions (help function), implemented by gdb: no inferior call.
GDB_FUNCTIONS = {
    "_as_string", "_streq", "_strlen", "_memeq", "_regex", "_isvoid", "_caller_is",
    "_caller_matches", "_any_caller_is", "_any_caller_matches", "_gdb_setting",
    "_gdb_setting_str", "_gdb_maint_setting", "_gdb_maint_setting_str", "_cimag",
    "_creal", "_shell", "_probe_arg0", "_probe_argc", "_isvoid",
}

# Command words gdb accepts (aliases and unique prefixes, checked against gdb 13's
# `help WORD`) -> what the rest of the line is.
def _prefixes(name, shortest):
    return {name[:i] for i in range(shortest, len(name) + 1)}

COMMANDS = {}
for words, kind in [
    ({"print", "p", "inspect"}, "expr"),
    ({"print-object", "po"}, "expr"),
    (_prefixes("call", 3), "expr"),
    (_prefixes("output", 2), "expr"),
    (_prefixes("display", 4), "expr"),
    ({"x"}, "expr"),
    ({"printf"}, "printf"),
    (_prefixes("dprintf", 2), "dprintf"),
    (_prefixes("eval", 2), "printf"),
    ({"set"}, "set"),
    (_prefixes("break", 1) | _prefixes("tbreak", 2) | _prefixes("hbreak", 2)
     | _prefixes("thbreak", 3), "break"),
    (_prefixes("condition", 4), "condition"),
    (_prefixes("watch", 2) | _prefixes("rwatch", 2) | _prefixes("awatch", 2), "watch"),
    ({"if", "while"}, "expr"),
    (_prefixes("return", 3), "expr"),
    ({"compile", "expression", "expr"} | _prefixes("compile", 5), "compile"),
    ({"python", "py", "pi", "python-interactive"}, "python"),
]:
    for w in words:
        COMMANDS[w] = kind

KEYWORDS = {"sizeof", "_Alignof", "alignof", "__alignof__", "typeof", "__typeof__",
            "__typeof", "_Generic"}
TYPE_WORDS = {"struct", "union", "enum", "const", "volatile", "unsigned", "signed",
              "char", "short", "int", "long", "float", "double", "void", "_Bool",
              "bool", "size_t", "ssize_t"}

TOKEN = re.compile(r"""
    (?P<str>"(?:[^"\\]|\\.)*"?) |
    (?P<chr>'(?:[^'\\]|\\.)*'?) |
    (?P<conv>\$[A-Za-z_][A-Za-z0-9_]*|\$\$?[0-9]*) |
    (?P<id>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*) |
    (?P<num>[0-9][A-Za-z0-9_.]*) |
    (?P<op>->|::|[-+*/%&|^!~<>=?:,.;@\[\](){}])
    """, re.X)


def tokens(expr):
    out = []
    for m in TOKEN.finditer(expr):
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


def is_cast(group):
    """Tokens between a '(' and its ')': a type name, as in (Fetcher *) or (int)? Words
    first, then only stars."""
    if not group or group[0][0] != "id":
        return False
    i = 0
    while i < len(group) and group[i][0] == "id":
        i += 1
    if any(v != "*" for _, v in group[i:]):
        return False
    words = [v for _, v in group[:i]]
    return (i < len(group) or any(w in TYPE_WORDS for w in words)
            or (len(words) == 1 and words[0].endswith("_t")))


def expr_problems(expr, functions, string_ok=False):
    """Why evaluating expr would run code in the program (a list; empty: it would not).
    string_ok: a string literal that is the whole expression is fine."""
    toks = tokens(expr)
    why = []
    stack = []          # for each open '(': (index, the callee token before it, str-ok)
    for i, (kind, val) in enumerate(toks):
        prev = toks[i - 1] if i > 0 else (None, None)
        if val == "(" and kind == "op":
            callee = None
            if prev[0] == "id" and prev[1] not in KEYWORDS and prev[1] not in TYPE_WORDS:
                callee = prev[1]
            elif prev[0] == "conv":
                if prev[1][1:] not in functions:
                    callee = prev[1]
            elif prev[1] == "]":
                callee = "(an array element)"
            elif prev[1] == ")" and prev[0] == "op":
                # the group just closed: a cast, or an expression being called
                depth, j = 0, i - 1
                while j >= 0:
                    if toks[j][1] == ")":
                        depth += 1
                    elif toks[j][1] == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    j -= 1
                if not is_cast(toks[j + 1:i - 1]):
                    callee = "(" + " ".join(v for _, v in toks[j + 1:i - 1]) + ")"
            if callee:
                why.append("calls %s() in the program" % callee)
            internal = prev[0] == "conv" and prev[1][1:] in functions
            stack.append(internal)
        elif val == ")" and kind == "op":
            if stack:
                stack.pop()
        elif kind == "str":
            in_internal_call = bool(stack) and stack[-1]
            whole = string_ok and len(toks) == 1
            if not (in_internal_call or whole):
                why.append("the string %s would be copied into the program "
                           "(gdb calls malloc there)" % val)
    return why


def split_args(text):
    """Split on top-level commas (printf "fmt", a, b)."""
    parts, depth, cur, q = [], 0, "", None
    for ch in text:
        if q:
            cur += ch
            if ch == q and not cur.endswith("\\" + q):
                q = None
            continue
        if ch in "\"'":
            q = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


def strip_options(rest):
    """print -pretty -- EXPR, print/x EXPR, x/4i EXPR: the expression."""
    rest = re.sub(r"^/\S*\s*", "", rest)
    if rest.startswith("-"):
        m = re.search(r"(^|\s)--(\s|$)", rest)
        if m:
            rest = rest[m.end():]
        else:
            rest = re.sub(r"^(-\S+\s+)+", "", rest)
    return rest


def command_problems(line, functions):
    """Why the gdb command line would run code in the program."""
    line = line.strip()
    if not line or line.startswith("#"):
        return []
    m = re.match(r"([A-Za-z][A-Za-z0-9_-]*)(/\S*)?\s*(.*)$", line, re.S)
    if not m:
        return []
    word, fmt, rest = m.group(1), m.group(2) or "", m.group(3)
    kind = COMMANDS.get(word)
    if kind is None:
        return []
    rest = (fmt + " " + rest).strip() if fmt else rest
    if kind == "expr":
        return expr_problems(strip_options(rest), functions, string_ok=word not in
                             _prefixes("return", 3) and word not in {"if", "while"})
    if kind in ("printf", "dprintf"):
        args = split_args(rest)
        if kind == "dprintf":
            args = args[1:]          # the location
        return [w for a in args[1:] for w in expr_problems(a, functions)]
    if kind == "set":
        mm = re.match(r"(var|variable)\s+(.*)$", rest, re.S)
        if mm:
            return expr_problems(mm.group(2), functions)
        mm = re.match(r"(\$[A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)\s*(.*)$", rest, re.S)
        if mm:
            return expr_problems(mm.group(2), functions, string_ok=True)
        if re.search(r"[^=!<>]=(?!=)", rest) and not re.match(r"[a-z-]+\s", rest):
            return expr_problems(rest, functions)
        return []
    if kind == "break":
        mm = re.search(r"\sif\s+(.*)$", " " + rest, re.S)
        return expr_problems(mm.group(1), functions) if mm else []
    if kind == "condition":
        mm = re.match(r"(-force\s+)?\d+\s+(.*)$", rest, re.S)
        return expr_problems(mm.group(2), functions) if mm else []
    if kind == "watch":
        rest = re.sub(r"^(-l|-location)\s+", "", rest)
        parts = re.split(r"\sif\s", rest, maxsplit=1)
        return [w for p in parts for w in expr_problems(p, functions)]
    if kind == "compile":
        return ["compile runs code in the program"]
    if kind == "python":
        return python_problems(rest, functions) if rest else []
    return []


PY_CALL = re.compile(r"gdb\.(execute|parse_and_eval)\(\s*(f?)(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')")


def python_problems(code, functions):
    why = []
    for m in PY_CALL.finditer(code):
        what, lit = m.group(1), m.group(3)[1:-1]
        if m.group(2):              # an f-string: check what is written of it
            lit = re.sub(r"\{[^}]*\}", "0", lit)
        if what == "execute":
            why += command_problems(lit, functions)
        else:
            why += expr_problems(lit, functions, string_ok=True)
    return why


# ---- where commands are ---------------------------------------------------------------

def gdb_file(path, text, functions):
    found, in_python, py_start, py = [], False, 0, []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if in_python:
            if s == "end":
                in_python = False
                for w in python_problems("\n".join(py), functions):
                    found.append((path, py_start, "python ... end", w))
            else:
                py.append(line)
            continue
        if s in ("python", "py", "python-interactive", "pi"):
            in_python, py_start, py = True, n, []
            continue
        for w in command_problems(s, functions):
            found.append((path, n, s, w))
    return found


def py_file(path, text, functions):
    found = []
    for m in PY_CALL.finditer(text):
        n = text.count("\n", 0, m.start()) + 1
        for w in python_problems(m.group(0) + ")", functions):
            found.append((path, n, m.group(0), w))
    return found


SH_STRING = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)\"""")


def sh_file(path, text, functions):
    found = []
    heredoc = None
    for n, line in enumerate(text.splitlines(), 1):
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            else:
                for w in command_problems(line, functions):
                    found.append((path, n, line.strip(), w))
            continue
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        if m:
            heredoc = m.group(1)
        if line.lstrip().startswith("#"):
            continue
        for m in SH_STRING.finditer(line):
            s = m.group(1) if m.group(1) is not None else m.group(2)
            s = s.replace('\\"', '"').replace("\\$", "$")
            for w in command_problems(s, functions):
                found.append((path, n, s, w))
    return found


def md_file(path, text, functions):
    found = []
    in_code = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        cmds = []
        if in_code:
            m = re.match(r"\s*\(gdb\)\s+(.*)$", line)
            if m:
                cmds.append(m.group(1))
            m = re.match(r"\s*\+(\S.*)$", line)
            if m:
                cmds.append(m.group(1))
        else:
            cmds += re.findall(r"`([^`]+)`", line)
        for c in cmds:
            for w in command_problems(c, functions):
                found.append((path, n, c.strip(), w))
    return found


def extension_functions(root):
    """Convenience functions our gdb extensions register (class X(gdb.Function) with
    super().__init__("name"))."""
    names = set()
    for d in ("docs/gdb", "scripts"):
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for f in os.listdir(full):
            if f.endswith(".py"):
                with open(os.path.join(full, f), encoding="utf-8") as fh:
                    t = fh.read()
                if "gdb.Function" in t:
                    names |= set(re.findall(r"__init__\(\s*[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']", t))
    return names


def scan(root):
    functions = GDB_FUNCTIONS | extension_functions(root)
    found, nfiles = [], 0
    targets = []
    for d in ("docs", "scripts", "tests"):
        for base, dirs, files in os.walk(os.path.join(root, d)):
            dirs[:] = [x for x in dirs if x not in ("corpus", "regressions", "files")]
            targets += [os.path.join(base, f) for f in files]
    targets += [os.path.join(root, f) for f in ("README.md", "HANDOUT.md", "Makefile.tutorial")]
    for p in sorted(set(targets)):
        rel = os.path.relpath(p, root)
        if p.endswith(".gdb"):
            fn = gdb_file
        elif p.endswith(".py"):
            fn = py_file
        elif p.endswith(".sh") or p.endswith("CMakeLists.txt") or p.endswith("Makefile.tutorial"):
            fn = sh_file
        elif p.endswith(".md"):
            fn = md_file
        else:
            continue
        if not os.path.isfile(p):
            continue
        with open(p, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        nfiles += 1
        found += fn(rel, text, functions)
    return found, nfiles


SELFTEST = [
    # (command, runs code in the program?)
    ("call task_dump_all()", True),
    ("print task_dump(t, stderr)", True),
    ("p f (1)", True),
    ("output s->fn(2)", True),
    ("p (*fp)(3)", True),
    ("p table[1](4)", True),
    ("p $fn(5)", True),
    ("cal g()", True),
    ("inspect h()", True),
    ("display/x k()", True),
    ("printf \"%d\\n\", n()", True),
    ("set var x = y()", True),
    ("set var name = \"x\"", True),
    ("p url == \"http://a/\"", True),
    ("break fetch_body if strcmp(url, \"a\") == 0", True),
    ("condition 2 check()", True),
    ("watch -l co->line if ok()", True),
    ("if count() > 1", True),
    ("compile code x = 1", True),
    ("python gdb." "execute(\"call f()\")", True),      # split: this file is scanned too
    ("python gdb." "parse_and_eval('g(1)')", True),
    ("return f()", True),
    ("p *co", False),
    ("p *(Fetcher *)data", False),
    ("p ((Fetcher *)data)->url", False),
    ("p *((get_frame *)co)->q", False),
    ("p (int) (x)", False),
    ("p sizeof(task)", False),
    ("print/x co->line", False),
    ("p -pretty -- *t", False),
    ("x/4xg $sp", False),
    ("printf \"[connected] %s\\n\", ((Fetcher *)data)->url", False),
    ("set $page = \"http://127.0.0.1/p/2\"", False),
    ("p \"just text\"", False),
    ("break html_start_element if $_streq(((links_parser *)user)->page_url, $page) && $_streq((const char *)name, \"a\")", False),
    ("while $_isvoid($_exitcode)", False),
    ("return (int) 1", False),
    ("finish", False),
    ("ptype f()", False),
    ("info tasks", False),
    ("coro-bt 1", False),
    ("watch -l co->line", False),
    ("set print pretty on", False),
    ("echo call f()\\n", False),
    ("python gdb." "execute(\"info tasks\")", False),
]


def selftest():
    bad = 0
    for cmd, calls in SELFTEST:
        got = bool(command_problems(cmd, GDB_FUNCTIONS))
        if got != calls:
            print("selftest: %r: %s, want %s" % (cmd, "flagged" if got else "passed",
                                                 "flagged" if calls else "passed"))
            bad += 1
    print("check-no-calls selftest: %d cases, %d wrong" % (len(SELFTEST), bad))
    return bad == 0


def main(argv):
    args = [a for a in argv if a != "--selftest"]
    ok = True
    if "--selftest" in argv:
        ok = selftest()
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found, nfiles = scan(os.path.abspath(root))
    for path, n, cmd, why in found:
        print("%s:%d: %s — %s" % (path, n, cmd, why))
    print("check-no-calls: %d file(s), %d gdb command(s) that would call into the program"
          % (nfiles, len(found)))
    return 0 if ok and not found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
