# watch-line.gdb — stage 2: watch two coroutine frames save their resume lines.
# Run by scripts/watch-line.sh (crawl-generators --max-tasks 1 on a local site).
# `co->line` is the frame's saved resume point (coro.h), the analogue of Python's
# gi_frame.f_lasti; `watch -l` puts a hardware watchpoint on that int in the heap
# frame, so gdb stops at each store to it, whichever C call is running the body.
set pagination off
set confirm off
set width 0
# No command of the course calls a function of the program: gdb 13 cannot finish
# one on CPUs with AMX (docs/debugging.md). With this, gdb refuses to.
set may-call-functions off
# info tasks, coro-bt, coro-list, info fetchers and the printers: crawlstages.py,
# found beside the sources this program was built from.
python
import os
gdb.execute("source %s/docs/gdb/crawlstages.py" % os.path.dirname(os.path.dirname(gdb.lookup_global_symbol("main").symtab.fullname())))
end
set print frame-arguments scalars
set trace-commands on
break fetch_body
run
p co->line
watch -l co->line
continue
delete 1
break raw_get_body
continue
delete 3
p co->line
p co->parent->line
watch -l co->line
continue
continue
coro-bt
continue
bt 8
p co->parent->line
coro-bt
# The frame is freed once read_all has returned and http_get finishes: free() reuses
# the int under the watchpoint, which is why a -location watch is deleted by then.
continue
bt 5
kill
