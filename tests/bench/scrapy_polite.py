"""Scrapy on bench.sh's politeness site (docs/benchmarks.md, "Politeness").

    /usr/bin/python3 tests/bench/scrapy_polite.py [--queue daq] DELAY ROOT...

Crawls every ROOT, following each page's links that stay on one of the roots'
host:port, with the settings bench.sh compares against crawl-queue --max-tasks 20
--per-host 2 --delay DELAY: 20 requests at once, 2 per domain, DELAY seconds between
two starts on one domain (not randomized), robots.txt obeyed. --queue daq swaps the
scheduler's priority queue for DownloaderAwarePriorityQueue, the one Scrapy's docs
advise for broad crawls. Prints "pages=N" (responses parsed) on stdout at the end.

Debian's python3-scrapy: run with /usr/bin/python3, not a python3 that lacks it.
"""
import sys
from urllib.parse import urldefrag, urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess


class PoliteSpider(scrapy.Spider):
    name = "polite"

    def __init__(self, roots, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = roots
        self.netlocs = {urlsplit(u).netloc for u in roots}
        self.pages = 0

    def start_requests(self):
        # dont_filter stays False, unlike Scrapy's default start requests: a link back
        # to a root is then a duplicate, as in crawl-queue, and not a second fetch.
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        self.pages += 1
        for href in response.css("a::attr(href)").getall():
            url = urldefrag(response.urljoin(href.strip()))[0]
            if urlsplit(url).netloc in self.netlocs:
                yield scrapy.Request(url, callback=self.parse)


def main(argv):
    queue = None
    if len(argv) >= 2 and argv[0] == "--queue":
        if argv[1] != "daq":
            sys.exit("scrapy_polite: --queue takes daq")
        queue = "scrapy.pqueues.DownloaderAwarePriorityQueue"
        argv = argv[2:]
    if len(argv) < 2:
        sys.exit("usage: scrapy_polite.py [--queue daq] DELAY ROOT...")
    settings = {
        "CONCURRENT_REQUESTS": 20,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
        "DOWNLOAD_DELAY": float(argv[0]),
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,     # no listening socket
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    if queue:
        settings["SCHEDULER_PRIORITY_QUEUE"] = queue
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(PoliteSpider)
    process.crawl(crawler, roots=argv[1:])
    process.start()
    print(f"pages={crawler.spider.pages}")


if __name__ == "__main__":
    main(sys.argv[1:])
