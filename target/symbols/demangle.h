/* Itanium C++ ABI demangling (g++ and clang on every Linux target), for the
 * function names in reports: "_ZNSt6vectorIiSaIiEE9push_backERKi" becomes
 * "std::vector<int, std::allocator<int> >::push_back(int const&)", the way
 * c++filt and valgrind print it. */
#ifndef MT_SYMBOLS_DEMANGLE_H
#define MT_SYMBOLS_DEMANGLE_H

/* A malloc'd demangled name (free() it), or NULL when name is not a
 * mangled C++ name, libiberty cannot demangle it, or the answer is longer
 * than 64 KiB: callers then show the name as it is.  A non-NULL answer is
 * the text c++filt prints (it is c++filt's demangler).  "name@VERSION"
 * keeps its version suffix. */
char *demangle_cxx(const char *name);

#endif
