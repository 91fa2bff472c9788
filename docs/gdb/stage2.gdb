# stage2.gdb — crawl-generators: protothread coroutines driven by Tasks.
#   gdb -x docs/gdb/stage2.gdb --args build/bin/crawl-generators --max-tasks 2 URL
set pagination off
set confirm off
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
echo \ \ run                       start the crawl\n
echo \ \ p co->line                the saved resume line (0 = not started): gi_frame.f_lasti\n
echo \ \ p *(fetch_frame *)co      the heap frame (in fetch_body): what survives an await\n
echo \ \ bt                        task_step -> fetch -> http_get -> read_all -> read: the chain\n
echo \ \ call task_dump_all()      every live Task with each frame's saved line\n
echo \ \ display co->line          then "next": the line is stored just before each suspension\n
echo \ \ watch -l co->line         stop whenever this frame saves a new resume point\n
echo \ \                           (delete it when the frame is freed: the heap is reused)\n
echo \ \ up / p co->line           a parent's line stays at its AWAIT while the child moves\n
echo ==========================================================================\n
