function parse(response)
    item({url = response.url})
    local x = = 1
end
