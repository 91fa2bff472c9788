# trace-error.gdb — stop where the raw transport writes an error's text (raw_error:
# "connect: Connection refused"), print the C stack. Stages 1 and 2, root URL on a
# closed port, --max-tries 1.
set pagination off
set confirm off
# No command of the course calls a function of the program (docs/debugging.md).
set may-call-functions off
set width 0
set print frame-arguments none
set print address off
break raw_error
run
echo @@bt-begin\n
bt
echo @@bt-end\n
kill
