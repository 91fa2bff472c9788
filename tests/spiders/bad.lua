-- bad.lua — test_spiders: one misbehaviour per page of spiders-bad.site. Each must end
-- only its own callback, as the record's exception; /after must still get its item.
function parse(response)
    local path = response.url:match("^https?://[^/]+(/.*)$")
    if path == "/" then
        for _, u in ipairs(response:links()) do follow(u) end
    elseif path == "/error" then
        error("broken on purpose")
    elseif path == "/loop" then
        while true do end
    elseif path == "/hog" then
        local hog = {}
        for i = 1, 1e9 do hog[i] = string.rep("x", 4096) .. i end
    elseif path == "/exec" then
        os.execute("touch /tmp/crawlstages-spider-escaped")
    elseif path == "/io" then
        io.open("/etc/passwd")
    elseif path == "/require" then
        require("io")
    elseif path == "/download" then
        local ok, err = pcall(download, "/dropped") -- caught: an item says why
        item({url = response.url, path = "/download (caught)", ok = ok, error = err})
        download("/dropped")                        -- not caught: the record says why
    end
    item({url = response.url, path = path})
end
