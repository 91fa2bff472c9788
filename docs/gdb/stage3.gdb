# stage3.gdb — crawl-queue: max_tasks workers around a joinable Queue.
#   gdb -x docs/gdb/stage3.gdb --args build/bin/crawl-queue --max-tasks 2 --chapter --ignore-robots URL
# (debug-stage3 passes --chapter --ignore-robots: the chapter's Queue and path, a worker
# awaiting fetch; without --ignore-robots the same breakpoints stop on the engine's
# path, robots.txt's Tasks beside; without --chapter the Queue is the polite one.)
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

# 1: a worker's loop: get, fetch, task_done (entered at every resume).
break work_body
# 2: Queue.get: waits while the queue is empty.
break get_body
# 3: one item dealt with; the last one schedules join's wake-up.
break queue_task_done
commands
  silent
  printf "\n[queue_task_done] unfinished_tasks %zu -> %zu, %zu item(s) queued\n", q->unfinished_tasks, q->unfinished_tasks - 1, q->items.count
  frame
end
# 4: crawl's `yield from q.join()`.
break join_body

echo \n
echo == stage 3: queue and workers ===========================================\n
echo Breakpoints:\n
echo \ \ 1 work_body        a worker (work-0, work-1, ...): get, fetch, task_done\n
echo \ \ 2 get_body         q.get(): a worker with nothing to do waits here\n
echo \ \ 3 queue_task_done  counts unfinished_tasks down\n
echo \ \ 4 join_body        crawl waits here until unfinished_tasks is 0\n
echo Try, at each stop:\n
echo \ \ run                          start the crawl\n
echo \ \ info tasks                   crawl and the workers, each with its chain of frames\n
echo \ \ coro-bt                      the chain of the Task running now\n
echo \ \ p *co->task                  that Task, as asyncio prints one\n
echo \ \ p *co                        the frame (in work_body: the URL this worker holds)\n
echo \ \ p *((get_frame *)co)->q      (in get_body) the Queue: items, getters, unfinished tasks\n
echo \ \ bt                           who woke this coroutine: a getter, a socket, join\n
echo \ \ disable 1 2                  then "continue": only task_done and join remain\n
echo ==========================================================================\n
