-- parse (a shelf) and book (a book's page): the README beside this file
-- (exercise-stage3-spider/README.md) says what they must do. Add any helper you need.
function parse(response)
    -- TODO: send each book's page to the callback "book", and go on to the next
    -- shelf. As it is, the crawl ends at the first shelf, with no item.
end

function book(response)
    -- TODO: emit the book's item: url, title, author, price, rating.
end
