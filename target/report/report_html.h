/* Shared by the HTML page's writers (report_html.c, report_html_data.c);
 * not part of the public API. */
#ifndef MT_REPORT_HTML_H
#define MT_REPORT_HTML_H

#include "target/report/report_internal.h"

/* Longest frame label kept (longer names are cut). */
#define REPORT_HTML_LABEL_MAX 1024

/* A frame's name as the flame graph shows it: the function, else the
 * module's file name + offset, else the pc (as the folded report names it,
 * without folded's character substitutions), escaped (text_escape.h). */
void report_html_frame_label(char *buf, size_t len, const struct report_frame *f);

/* The page's JSON data (see report_html_data.c), safe inside <script>;
 * now: heap_seconds() when the report began. */
void report_html_write_data(FILE *out, const struct report_source *src, double now);

/* s as HTML text or attribute value: escaped (text_escape.h: control
 * characters and ill-formed UTF-8 as \xHH), then & < > " ' as entities. */
void report_html_text(FILE *out, const char *s);

#endif
