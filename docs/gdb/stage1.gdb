# stage1.gdb — crawl-callbacks: the Fetcher's chain of callbacks.
#   gdb -x docs/gdb/stage1.gdb --args build/bin/crawl-callbacks --max-tasks 2 URL
# (make -f Makefile.tutorial debug-stage1 does exactly that, with a local site.)
set pagination off
set confirm off
set print pretty on

# 1: the socket is writable, the connection is made (or refused): send the GET.
break connected
commands
  silent
  printf "\n[connected] %s  sent %zu of %zu bytes\n", ((Fetcher *)data)->url, ((Fetcher *)data)->sent, ((Fetcher *)data)->request_len
  frame
end
# 2: the socket is readable: recv one 4 KB chunk, feed the HTTP parser.
break read_response
commands
  silent
  printf "\n[read_response] %s  fd %d\n", ((Fetcher *)data)->url, fd
  frame
end

echo \n
echo == stage 1: callbacks ===================================================\n
echo Breakpoints:\n
echo \ \ 1 connected      the continuation fetch() left with the selector (SEL_WRITE)\n
echo \ \ 2 read_response  the continuation connected() left (SEL_READ), once per chunk\n
echo Try, at each stop:\n
echo \ \ run                        start the crawl (arguments are already set)\n
echo \ \ bt                         below the callback: only the event loop. That is stack ripping\n
echo \ \ p *(Fetcher *)data         the "locals" this fetch saved by hand between callbacks\n
echo \ \ p ((Fetcher *)data)->url   which of the concurrent fetches this callback serves\n
echo \ \ finish                     return to dispatch_io: nothing of the fetch stays on the stack\n
echo \ \ info breakpoints           how many times each callback ran so far\n
echo \ \ continue                   the next callback, often for another URL\n
echo ==========================================================================\n
