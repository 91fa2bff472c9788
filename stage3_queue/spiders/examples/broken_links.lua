-- broken_links.lua — links of this site that answer 4xx or 5xx, with every page that
-- links to them. handle_httpstatus_all (Scrapy's spider attribute) lets the 4xx and
-- 5xx responses reach parse too, so each link of the site is fetched once, by follow();
-- a link whose fetch fails on the network (no status) is a record with its exception.
-- Run:
--   crawl-queue --spider broken_links.lua --items broken.jsonl ROOT
handle_httpstatus_all = true

local status = {}           -- url -> its status, once its response came
local referrers = {}        -- url -> the pages linking to it, until then

local function same_site(response, url)
    local origin = response.url:match("^(https?://[^/]+)")
    return url:sub(1, #origin + 1) == origin .. "/"
end

local function broken(url, referrer)
    item({url = url, status = status[url], referrer = referrer})
end

function parse(response)
    local url = response.url
    status[url] = response.status
    if response.status >= 400 then
        for _, referrer in ipairs(referrers[url] or {}) do
            broken(url, referrer)
        end
        referrers[url] = nil
        return
    end
    for _, link in ipairs(response:links()) do
        if same_site(response, link) then
            if status[link] == nil then
                referrers[link] = referrers[link] or {}
                table.insert(referrers[link], url)
                follow(link)
            elseif status[link] >= 400 then
                broken(link, url)
            end
        end
    end
end
