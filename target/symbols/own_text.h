/* The tracer's own code pages, given back before a debug object is
 * indexed. */
#pragma once

/* Drops the resident pages of the tracer's own read-only executable file
 * mappings (its binary, libc, zlib, ld.so) that hold no private copy:
 * they are page-cache pages the kernel maps back, unchanged, at the next
 * touch.  The kernel maps up to 64 KiB around each fault of such a file
 * ("fault-around"), so code run once (start-up, option parsing, TLS
 * set-up, launching) stays resident for nothing; indexing a large debug
 * file is the tracer's peak, and this keeps that code out of it. */
void own_text_release(void);
