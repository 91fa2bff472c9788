/* bookshop_hidden.h — the hidden cases of the stage3-spider exercise (hidden.conf), for
 * tests/integration/test_spider_exercise.c, which includes it when the build has
 * tests/hidden/ (CRAWL_HIDDEN_DIR): the books of sites/bookshop.site, a shop with four
 * shelves the student never sees, and the cases that crawl it. Not in a handout. */
#ifndef CRAWL_BOOKSHOP_HIDDEN_H
#define CRAWL_BOOKSHOP_HIDDEN_H

static const book hidden_books[] = {
    {"/book/amber-gate", "Amber Gate", "Ivy Stone", 5.60, 3, 1, 1},
    {"/book/birch-letters", "Birch Letters", "Jo Wren", 10.20, 4, 1, 0},
    {"/book/copper-tide", "Copper Tide", "Kit Moor", 13.90, 5, 2, 1},
    {"/book/dune-choir", "Dune Choir", "Lu Fenn", 3.50, 1, 2, 1},
    {"/book/elm-cipher", "Elm Cipher", "Mo Hart", 8.80, 2, 3, 0},
    {"/book/fern-atlas", "Fern Atlas", "Ned Vail", 14.10, 5, 3, 1},
    {"/book/grey-lantern", "Grey Lantern", "Oona Pell", 6.30, 4, 4, 1},
};

static shop hidden_shop = {.site = CRAWL_HIDDEN_DIR "/sites/bookshop.site",
                           .label = "hidden",
                           .books = hidden_books,
                           .nbooks = sizeof hidden_books / sizeof *hidden_books};

#define HIDDEN_CASES                                                                               \
    {"test_hidden_runs", &hidden_shop, RUNS, 0, 0},                                                \
        {"test_hidden_all_shelves", &hidden_shop, SHELVES, 1, 99},                                 \
        {"test_hidden_ratings", &hidden_shop, ALL_RATINGS, 0, 0},                                  \
        {"test_hidden_exact_items", &hidden_shop, EXACT, 0, 0},

#endif
