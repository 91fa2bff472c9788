# frames.gdb — stop in the link parser at the first <a> of one page and draw the frames
# (frames-svg, docs/gdb/crawlstages.py): the C stack and the heap's Tasks or Fetchers.
# Used by scripts/frames.sh on stages 1 and 2; set $page, $svg and $title first ($root too):
#   gdb -batch -ex 'set $page = "http://.../p/2"' -ex 'set $svg = "s.svg"' ... -x frames.gdb
set pagination off
set confirm off
# No command of the course calls a function of the program (docs/debugging.md).
set may-call-functions off
python
import os
# The tree: $root if set (frames.sh sets it), else where main's source is. The debug
# info's path can be another tree's where a compiler cache shared the object file.
root = gdb.convenience_variable("root")
root = root.string() if root is not None else os.path.dirname(os.path.dirname(gdb.lookup_global_symbol("main").symtab.fullname()))
gdb.execute("source %s/docs/gdb/crawlstages.py" % root)
end
break tok_start if $_streq(((links_parser *)user)->page_url, $page) && $_streq(name, "a")
run
eval "frames-svg %s \"%s\"", $svg, $title
kill
