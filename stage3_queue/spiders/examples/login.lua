-- login.lua — log in with a form (a POST), then crawl the members' pages: Scrapy's
-- FormRequest. The session cookie the login sets goes in the crawl's jar, so:
--   crawl-queue --spider login.lua --cookies jar.txt --items members.jsonl ROOT
-- ROOT redirects to its login page while there is no session; the form is posted
-- with download{method = "POST", form = ...}, whose answer (a redirect back) is
-- followed with dont_filter: ROOT was seen already, as the redirect to the login.
USER, PASSWORD = "alice", "s3cr3t-pw"

function parse(response)
    local action = response:xpath("//form[@method='post']/@action")[1]
    if action then -- the login page
        local r = download{url = action, method = "POST",
                           form = {user = USER, password = PASSWORD}}
        if r.status >= 300 and r.status < 400 and r.headers["location"] then
            follow{url = response:urljoin(r.headers["location"]), dont_filter = true}
        else
            log("login refused: " .. r.status .. " from " .. r.url)
        end
        return
    end
    for _, link in ipairs(response:links()) do
        follow(link, "member")
    end
end

function member(response)
    item({url = response.url, name = response:xpath("//h1")[1]})
end
