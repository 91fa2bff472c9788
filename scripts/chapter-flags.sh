# chapter-flags.sh — sourced by the course's scripts (debug.sh, check-gdb.sh,
# regen-docs.sh): the crawl-queue flags that give the chapter's crawler, the stage 3
# the gdb guide narrates (crawling.py's Queue and workers that await fetch themselves,
# no robots.txt, no engine). Change it here, and every script and generated transcript
# follows (then run scripts/regen-docs.sh).
CHAPTER_FLAGS=(--ignore-robots)
