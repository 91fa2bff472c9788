#!/usr/bin/env python3
"""renamed_copy.py NAME FILE: print exercise NAME's solution region of FILE (between its
EXERCISE markers, C or Lua) with every identifier renamed (keywords and upper-case
macros kept): the copy a student who renamed everything would plant. handout_test.sh
plants it in the handout and expects handout.sh --check to find it."""
import re
import sys

KEYWORDS = set("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while bool true false NULL
and elseif end function in local nil not or repeat then until""".split())


def rename(m):
    word = m.group(0)
    return word if word in KEYWORDS or word.isupper() else "q" + word[::-1]


def main():
    name, path = sys.argv[1], sys.argv[2]
    region, inside = [], False
    for line in open(path, encoding="utf-8"):
        if f"EXERCISE {name}: BEGIN" in line:
            inside = True
        elif f"EXERCISE {name}: END" in line:
            break
        elif inside:
            region.append(line)
    if not region:
        sys.exit(f"renamed_copy: no region of {name} in {path}")
    sys.stdout.write(re.sub(r"\b[A-Za-z_]\w*\b", rename, "".join(region)))


main()
