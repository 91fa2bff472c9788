# stage2.gdb — crawl-generators: protothread coroutines driven by Tasks.
#   gdb -x docs/gdb/stage2.gdb --args build/bin/crawl-generators --max-tasks 2 URL
set pagination off
set confirm off
# No command of the course calls a function of the program: gdb 13 cannot finish
# one on CPUs with AMX (docs/debugging.md). With this, gdb refuses to.
set may-call-functions off
# info tasks, coro-bt, coro-list, info fetchers and the printers: crawlstages.py,
# found beside the sources this program was built from.
python
import os
gdb.execute("source %s/docs/gdb/crawlstages.py" % os.path.dirname(os.path.dirname(gdb.lookup_global_symbol("main").symtab.fullname())))
end
set print pretty on

# 1: the Task resumes its outermost frame (the chapter's Task.step).
break task_step
commands
  silent
  printf "\n[task_step] task '%s'  fetch frame resumes at line %d\n", t->name, t->coro ? t->coro->line : -1
  frame
end
# 2-4: coroutine bodies, entered on the first call and on every resume.
break fetch_body
break read_all_body
break read_body
# task_step stops at every resume of every task: start with it off (enable 1).
disable 1

echo \n
echo == stage 2: coroutines ==================================================\n
echo Breakpoints (each body is entered again at every resume: the switch jumps\n
echo to the saved line):\n
echo \ \ 1 task_step       the Task resumes the chain (disabled; "enable 1")\n
echo \ \ 2 fetch_body      the retry loop; awaits http_get\n
echo \ \ 3 read_all_body   feeds each chunk to the HTTP parser; awaits read\n
echo \ \ 4 read_body       waits for readability: AWAIT_FUTURE\n
echo Try, at each stop:\n
echo \ \ run                  start the crawl\n
echo \ \ info tasks           every live Task, and the saved line of each frame of its chain\n
echo \ \ coro-bt              this Task's chain as a Python traceback (with gdb's frame numbers)\n
echo \ \ coro-list            the source around this frame's resume line\n
echo \ \ p *co                the heap frame: line (f_lasti), parent (f_back), child, and the\n
echo \ \                      fields that survive an await (p *(fetch_frame *)co: the same)\n
echo \ \ p co->line           the saved resume point (0 = not started): gi_frame.f_lasti\n
echo \ \ bt                   task_step -> fetch -> ... -> read_all -> read: the chain as C calls\n
echo \ \ display co->line     then "next": the line is stored just before each suspension\n
echo \ \ watch -l co->line    stop whenever this frame saves a new resume point\n
echo \ \                      (delete it when the frame is freed: the heap is reused)\n
echo \ \ up / p co->line      a parent's line stays at its AWAIT while the child moves\n
echo ==========================================================================\n
