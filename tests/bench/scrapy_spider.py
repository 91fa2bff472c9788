"""Scrapy on bench.sh's "spiders" site (docs/benchmarks.md, "Spiders").

    /usr/bin/python3 tests/bench/scrapy_spider.py ROOT ITEMS.jsonl

The extraction of tests/bench/spider_titles.lua: for every page, its title and links
with response.xpath, one item {url, title, links} in a JSON lines feed, each link on
the root's host:port followed. 100 requests at once (crawl-queue's --max-tasks), no
robots.txt (crawl-queue runs with --ignore-robots), no delay. Prints "pages=N".

Debian's python3-scrapy: run with /usr/bin/python3, not a python3 that lacks it.
"""
import sys
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess


class TitlesSpider(scrapy.Spider):
    name = "titles"

    def __init__(self, root, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [root]
        self.netloc = urlsplit(root).netloc
        self.pages = 0

    def parse(self, response):
        self.pages += 1
        links = response.xpath("//a/@href").getall()
        yield {"url": response.url, "title": response.xpath("//title/text()").get(),
               "links": len(links)}
        for href in links:
            url = response.urljoin(href.strip())
            if urlsplit(url).netloc == self.netloc:
                yield scrapy.Request(url, callback=self.parse)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: scrapy_spider.py ROOT ITEMS.jsonl")
    settings = {
        "CONCURRENT_REQUESTS": 100,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 100,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,     # no listening socket
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        "FEEDS": {argv[1]: {"format": "jsonlines", "overwrite": True}},
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(TitlesSpider)
    process.crawl(crawler, root=argv[0])
    process.start()
    print(f"pages={crawler.spider.pages}")


if __name__ == "__main__":
    main(sys.argv[1:])
