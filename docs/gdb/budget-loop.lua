-- budget-loop.lua — a spider that tries to outlast its budget: each error of the inner
-- loop is caught by pcall, and the outer loop goes on. Run by docs/gdb/budget-stop.gdb
-- (scripts/regen-docs.sh) for docs/spiders.md, "A budget stop, seen in gdb".
function parse(response)
    while true do
        pcall(function()
            while true do
            end
        end)
    end
end
