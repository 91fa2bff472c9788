# frames.gdb — stop in the link parser at the first <a> of one page and draw the frames
# (frames-svg, docs/gdb/crawlstages.py): the C stack and the heap's Tasks or Fetchers.
# Used by scripts/frames.sh on stages 1 and 2; set $page, $svg and $title first:
#   gdb -batch -ex 'set $page = "http://.../p/2"' -ex 'set $svg = "s.svg"' ... -x frames.gdb
set pagination off
set confirm off
# No command of the course calls a function of the program (docs/debugging.md).
set may-call-functions off
python
import os
gdb.execute("source %s/docs/gdb/crawlstages.py" % os.path.dirname(os.path.dirname(gdb.lookup_global_symbol("main").symtab.fullname())))
end
break tok_start if $_streq(((links_parser *)user)->page_url, $page) && $_streq(name, "a")
run
eval "frames-svg %s \"%s\"", $svg, $title
kill
