-- broken_links.lua — links of this site that answer 4xx or 5xx (or nothing), with the
-- page that links to them. A callback only sees 2xx responses, so each link of the site
-- is checked once with download(), which returns whatever status came (and raises when
-- the download fails: pcall catches it). Run:
--   crawl-queue --spider broken_links.lua --items broken.jsonl ROOT
local checked = {}          -- url -> status, or "failed"

local function same_site(response, url)
    local origin = response.url:match("^(https?://[^/]+)")
    return url:sub(1, #origin + 1) == origin .. "/"
end

function parse(response)
    for _, link in ipairs(response:links()) do
        if same_site(response, link) then
            if checked[link] == nil then
                local ok, r = pcall(download, link)
                checked[link] = ok and r.status or "failed"
            end
            local status = checked[link]
            if status == "failed" or status >= 400 then
                item({url = link, status = status, referrer = response.url})
            else
                follow(link)
            end
        end
    end
end
