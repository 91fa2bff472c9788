/* Keeps the harness library non-empty before any helper exists. */
typedef int crawltest_empty_unit;
