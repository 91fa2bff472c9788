-- bookshop.lua — the stage3-spider exercise (docs/exercises/stage3-spider/README.md):
-- a spider for a paginated listing (tests/sites/bookshop.site). docs/spiders.md's
-- section "Callbacks that wait: download()" is the chapter's Task.step driving a Lua
-- coroutine; this spider is one. Run:
--   crawl-queue --spider bookshop.lua --items books.jsonl http://HOST:PORT/shelf/1
-- EXERCISE stage3-spider: BEGIN (docs/exercises/stage3-spider/: README.md, stub.lua)

-- The first string an XPath expression finds on the page, or nil.
local function first(response, expr)
    return response:xpath(expr)[1]
end

-- A shelf: each book's page goes to "book"; the next shelf, if any, comes back here.
function parse(response)
    local books = response:xpath('//a[@class="book"]/@href')
    for i = 1, #books do
        follow(books[i], "book")
    end
    local next_shelf = first(response, '//a[@rel="next"]/@href')
    if next_shelf then
        follow(next_shelf)
    end
end

-- A book: its fields from the page; its rating there, or from the API the page names
-- (the callback waits for that download; the other workers go on).
function book(response)
    local stars = first(response, '//p[@class="rating"]/@data-stars')
    local api = first(response, '//p[@class="rating"]/@data-api')
    if not stars and api then
        local answer = download(response:urljoin(api))
        stars = json.decode(answer.body).stars
    end
    item({
        url = response.url,
        title = first(response, '//h1[@class="title"]'),
        author = first(response, '//p[@class="author"]/span'),
        price = tonumber(first(response, '//td[@class="price"]')),
        rating = tonumber(stars),
    })
end
-- EXERCISE stage3-spider: END
