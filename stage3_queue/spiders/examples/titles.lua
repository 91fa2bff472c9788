-- titles.lua — every page's title, and every link followed: today's crawler with one
-- item per page. Run:  crawl-queue --spider titles.lua --items titles.jsonl ROOT
function parse(response)
    local title = response:xpath("//title")[1]
    item({url = response.url, title = title, depth = response.depth})
    for _, link in ipairs(response:links()) do
        follow(link)
    end
end
