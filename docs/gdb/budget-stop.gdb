# budget-stop.gdb — stage 3: a Lua spider stopped by its instruction budget, and why
# its pcall cannot catch the stop. Run by scripts/regen-docs.sh (crawl-queue --spider
# docs/gdb/budget-loop.lua --spider-budget 100000 on a local site) for the transcript
# in docs/spiders.md, "A budget stop, seen in gdb". Breakpoint 1: the count hook finds
# the budget spent (in the spider's inner loop); breakpoint 2: the sandbox's pcall sees
# the error the hook raised, and raises the stop again instead of returning false.
set pagination off
set confirm off
set width 0
# No command of the course calls a function of the program (docs/debugging.md).
set may-call-functions off
set print frame-arguments none
set print address off
set trace-commands on
break stop_budget
run
bt 13
frame function count_hook
p *used
p s->budget
break finish_pcall
continue
bt 3
p status
next
next
p st->kind
printf "%s\n", st->msg
delete
continue
