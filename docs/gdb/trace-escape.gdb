# trace-escape.gdb — stage 2 only: the same refused connect, seen as coroutines.
# 1. At raw_error, every live Task and the saved line of each of its frames
#    (task_dump_all, task.c).
# 2. fetch_response catches the error to retry (AWAIT_CATCH, then remember_error), and
#    fetch catches what fetch_response raises to record it (crawl_record_failure).
#    Make both bodies return there instead, as if they had no `except`: the error
#    escapes the Task, and task.c prints "Task '...' raised an exception:" and the
#    traceback the error captured when connect raised it.
set pagination off
set confirm off
set width 0
break raw_error
run
echo @@dump-begin\n
call task_dump_all()
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
