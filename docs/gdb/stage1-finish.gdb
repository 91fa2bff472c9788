# stage1-finish.gdb — stage 1: `finish` in read_response, and where it stops first.
# Run by scripts/regen-docs.sh (crawl-callbacks --max-tasks 2 on a local site) for the
# transcript in docs/debugging.md, "The sessions". Breakpoints 1 and 2 are those of
# stage1.gdb; `finish` out of the root's read_response stops at breakpoint 1 first:
# the next fetch's `connected`, which read_response started on the way out. With
# breakpoint 1 disabled, `finish` out of that read_response returns to dispatch_io.
set pagination off
set confirm off
set width 0
# No command of the course calls a function of the program (docs/debugging.md).
set may-call-functions off
python
import os
gdb.execute("source %s/docs/gdb/crawlstages.py" % os.path.dirname(os.path.dirname(gdb.lookup_global_symbol("main").symtab.fullname())))
end
set print frame-arguments none
set print address off
set trace-commands on
break connected
break read_response
run
bt
continue
bt
finish
bt
disable 1
frame function read_response
finish
enable 1
info fetchers
kill
