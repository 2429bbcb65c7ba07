/* The tracer's own code pages, given back before a debug object is
 * indexed. */
#pragma once

/* Drops the resident pages of the tracer's own read-only file mappings
 * (its binary, libc, zlib, ld.so, OpenSSL after --key; code, and read-only
 * data: .rodata, relocation tables, symbol tables) that hold no private
 * copy: they are page-cache pages the kernel maps back, unchanged, at the
 * next touch.  The kernel maps up to 64 KiB around each fault of such a
 * file ("fault-around"), so code and tables used once (start-up, option
 * parsing, relocation, TLS set-up, launching) stay resident for nothing;
 * indexing a large debug file is the tracer's peak, and this keeps them
 * out of it.  A RELRO region written at start holds private copies and is
 * kept: known from the program headers (smaps' Anonymous count is not
 * trusted alone: qemu-user reports 0). */
void own_text_release(void);
