/* requisites.h — the page-requisites spider middleware (--requisites): with each HTML
 * page, also fetch what it needs to render, as wget -p does — img, script, link
 * rel=stylesheet/icon, source/srcset, video/audio poster and src, and url(...) in
 * <style> elements and style attributes (common/web/links_requisites.h, css_urls.h) —
 * and with each stylesheet fetched, its url()s and @imports.
 *
 * In process_spider_output it puts one request per requisite before the spider's own
 * (a URL that is both a link and a requisite of the page goes as the requisite): on
 * any host (the host policy does not apply; --exclude does), as deep as the page (a
 * requisite's own requisites — what a stylesheet fetched as one imports or names in
 * url() — one deeper than it, each hop, so that --max-depth ends a chain of
 * stylesheets), the page as referrer, and SPIDER_CB_REQUISITE as callback — so its record says
 * "requisite": true, it reaches no spider callback and none of its links is followed.
 * Each goes through the Queue as every URL: the seen set (fetched once), --max-pages,
 * robots.txt and politeness.
 *
 * crawl-queue enables it with --requisites (its descriptor, below).
 */
#ifndef CRAWL_SPIDERMW_REQUISITES_H
#define CRAWL_SPIDERMW_REQUISITES_H

#include "engine.h"

spider_middleware requisites_middleware(engine *e);

#endif
