# chapter-flags.sh — sourced by the course's scripts (debug.sh, check-gdb.sh,
# regen-docs.sh, inflight.sh): the crawl-queue flags that give the chapter's crawler.
#   CHAPTER_QUEUE  the chapter's Queue, no politeness (--chapter); robots.txt and the
#                  engine stay (DEBUG_ENGINE=1's path)
#   CHAPTER_FLAGS  the stage 3 the gdb guide narrates: crawling.py's Queue and workers
#                  that await fetch themselves, no robots.txt, no engine
# Change them here, and every script and generated transcript follows (then run
# scripts/regen-docs.sh).
CHAPTER_QUEUE=(--chapter)
CHAPTER_FLAGS=("${CHAPTER_QUEUE[@]}" --ignore-robots)
