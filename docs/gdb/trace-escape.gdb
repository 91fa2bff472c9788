# trace-escape.gdb — stage 2 only: the same refused connect, seen as coroutines.
# 1. At raw_error, the Task's chain of coroutine frames, each at its saved line, read
#    from memory by coro-bt (crawlstages.py).
# 2. fetch_response catches the error to retry (AWAIT_CATCH, then remember_error), and
#    fetch catches what fetch_response raises to record a failure
#    (crawl_record_failure). Make each of the two bodies return there instead, as if
#    neither had an `except`: the error escapes the Task, and task.c prints "Task '...'
#    raised an exception:" and the traceback the error captured when connect raised it.
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
break raw_error
run
echo @@dump-begin\n
coro-bt
echo @@dump-end\n
delete
break remember_error
continue
up
return (int) 1
delete
break crawl_record_failure
continue
up
echo @@escape-begin\n
return (int) 1
continue
echo @@escape-end\n
