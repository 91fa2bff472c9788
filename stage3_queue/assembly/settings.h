/* settings.h — crawl-queue's own flags: the engine's features (robots.txt, politeness,
 * storage, the frontier, ...), declared in one table, as Scrapy declares its settings
 * (scrapy/settings/default_settings.py), filling the settings every extension reads
 * (engine_settings.h). The shared command line (common/app/cli.h) parses the crawl
 * core's flags, this table's rows and each extension's own rows (its descriptor,
 * extension.h); this file alone names them.
 *
 * Adding a flag every extension may read: a field in engine_settings.h, a row in
 * settings.c (name, argument, range, help line, where the value goes), and a line in
 * README.md's option table; a flag of one extension's own: a row of its descriptor.
 * Stages 1 and 2 pass no table, so they refuse every flag of it as an unknown option.
 */
#ifndef CRAWL_SETTINGS_H
#define CRAWL_SETTINGS_H

#include "app.h"
#include "engine_settings.h"

/* The table cli_parse reads (its rows, defaults and cross checks). */
extern const cli_table settings_table;

/* crawl-queue as app_main runs it, its flags filling s; prog names it in messages. */
app_stage settings_stage(const char *prog, settings *s);

#endif
