-- spider_follow.lua — bench.sh's "spiders" section: a spider that only follows what the
-- crawler's link parser found, i.e. the crawler without a spider: its cost is the
-- spider machinery's (a Lua thread per page, the response table, the links array).
function parse(response)
    for _, link in ipairs(response:links()) do
        follow(link)
    end
end
