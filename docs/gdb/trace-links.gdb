# trace-links.gdb — stop in the link parser's start-tag callback (the tokenizer's) at the first
# <a> of one page, and print the C stack. Used by scripts/traces.sh on stages 1 and
# 2; set $page first:  gdb -batch -ex 'set $page = "http://.../p/2"' -x trace-links.gdb
set pagination off
set confirm off
# No command of the course calls a function of the program (docs/debugging.md).
set may-call-functions off
set width 0
set print frame-arguments none
set print address off
# `user` is the links_parser (lp is not assigned yet at the breakpoint).
break tok_start if $_streq(((links_parser *)user)->page_url, $page) && $_streq(name, "a")
run
echo @@bt-begin\n
bt
echo @@bt-end\n
kill
