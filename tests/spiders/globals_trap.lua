-- globals_trap.lua — parse defined, then every global it lacks a trap: a lookup the
-- crawler makes once the file has run (handle_httpstatus_all) must not run it.
function parse(response)
    item({url = response.url})
end
setmetatable(_G, {__index = function() while true do end end})
