-- listing.lua — a paginated listing, a details page per product, and a JSON API for its
-- stock: Scrapy's tutorial shape. parse walks the listing pages (rel=next) and sends
-- each product to the callback "product", which downloads the product's stock from the
-- API (the callback waits; other workers go on) and emits one item. Run:
--   crawl-queue --spider listing.lua --items products.jsonl ROOT
function parse(response)
    for _, href in ipairs(response:xpath('//a[@class="product"]/@href')) do
        follow(href, "product")
    end
    for _, href in ipairs(response:xpath('//a[@rel="next"]/@href')) do
        follow(href)
    end
    -- the home page: its way into the listing
    for _, href in ipairs(response:xpath('//a[text()="Products"]/@href')) do
        follow(href)
    end
end

function product(response)
    local id = response.url:match("/item/(%d+)$")
    local api = download(response:urljoin("/api/stock/" .. id))
    local stock = json.decode(api.body).stock
    item({
        url = response.url,
        name = response:xpath("//h1")[1],
        price = tonumber(response:xpath('//span[@class="price"]')[1]),
        stock = stock,
        in_stock = stock > 0,
    })
end
