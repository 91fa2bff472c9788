-- spider_titles.lua — bench.sh's "spiders" section: every page's title and links
-- (response:xpath, as tests/bench/scrapy_spider.py does in Scrapy), one item a page,
-- each link followed.
function parse(response)
    local links = response:xpath("//a/@href")
    item({url = response.url, title = response:xpath("//title")[1], links = #links})
    for _, href in ipairs(links) do
        follow(href)
    end
end
