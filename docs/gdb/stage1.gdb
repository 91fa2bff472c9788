# stage1.gdb — crawl-callbacks: the Fetcher's chain of callbacks.
#   gdb -x docs/gdb/stage1.gdb --args build/bin/crawl-callbacks --max-tasks 2 URL
# (make -f Makefile.tutorial debug-stage1 does exactly that, with a local site.)
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

# 1: the socket is writable, the connection is made (or refused): send the GET.
break connected
commands
  silent
  printf "\n[connected] %s  sent %zu of %zu bytes\n", ((Fetcher *)data)->url, ((Fetcher *)data)->sent, ((Fetcher *)data)->request_len
  frame
end
# 2: the socket is readable: recv one chunk (up to NET_READ_CHUNK, 64 KB), feed the
#    HTTP parser.
break read_response
commands
  silent
  printf "\n[read_response] %s  fd %d\n", ((Fetcher *)data)->url, fd
  frame
end

echo \n
echo == stage 1: callbacks ===================================================\n
echo Breakpoints:\n
echo \ \ 1 connected      the continuation start_raw left with the selector (SEL_WRITE),\n
echo \ \                  or called itself when the connection was made at once\n
echo \ \ 2 read_response  the continuation connected left (SEL_READ), once per chunk\n
echo Try, at each stop:\n
echo \ \ run                        start the crawl (arguments are already set)\n
echo \ \ bt                         at read_response: the callback, then only the event loop.\n
echo \ \                            That is stack ripping. At connected, often more: see below\n
echo \ \ p *(Fetcher *)data         the "locals" this fetch saved by hand between callbacks\n
echo \ \ info fetchers              every live Fetcher: URL, what it waits for, bytes so far\n
echo \ \ finish                     back to whoever called the callback: dispatch_io, or\n
echo \ \                            start_raw when the connection was made at once.\n
echo \ \                            At read_response it first stops at breakpoint 1: the\n
echo \ \                            next fetch's connected, which read_response started on\n
echo \ \                            its way out. To get out: disable 1, frame function\n
echo \ \                            read_response, finish, enable 1\n
echo \ \ info breakpoints           how many times each callback ran so far\n
echo \ \ continue                   the next callback, often for another URL\n
echo On loopback connect() often succeeds at once: start_raw then calls connected\n
echo itself, and bt shows who started the fetch (crawl_add_roots for a root; for a\n
echo link, the read_response of the page that found it). The stops under dispatch_io\n
echo show pure stack ripping (docs/debugging.md, "The sessions").\n
echo ==========================================================================\n
