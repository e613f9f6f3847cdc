/*
 * names.h — names people can read: a C++ function's name without its return
 * type and parameter list (what table rows show; JSON keeps the signature),
 * the readable part of a mangled name the demangler refused (a kernel name
 * cut short, a construct it does not know), and short display names for a
 * set of long template names that never print the same text for two of them
 * (docs/cuda.md, "Names").  Pure string work; launcher side only.
 */
#ifndef CBN_NAMES_H
#define CBN_NAMES_H

#include <stddef.h>

/* The name without return type, parameter list and what follows it
 * (" const", " [clone .cold]", ABI tags): "void ns::k<int>(int*) const"
 * gives "ns::k<int>", "ns::A::operator()(int)" gives "ns::A::operator()".
 * A name that is not a demangled C++ signature comes back whole.  Returns a
 * pointer into name and the length in *len. */
const char *names_bare(const char *name, size_t *len);

/* names_bare() of name copied into buf (NUL-terminated, cut to len - 1
 * bytes).  Returns buf. */
char *names_bare_copy(char *buf, size_t len, const char *name);

/* The qualified name an Itanium-mangled name ("_Z...") starts with, as far as
 * it can be read without a full demangler, template arguments past the first
 * component shown as "<…>": "_ZN17cutlass__5x_cudnn6KernelINS_4gemm..." gives
 * "cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::gemm<…>>".  For names
 * __cxa_demangle refused (cut at the agent's name limit, or a construct it
 * does not know).  Returns 0 with the text in buf, or -1 when name is not a
 * mangled name this can read. */
int names_unmangle_prefix(const char *name, char *buf, size_t len);

/* Short display names for n names (each at most width columns, width >= 16),
 * two different names never getting the same text.  A name that fits stays
 * as it is; a longer one loses, in this order and only as far as needed, its
 * return type and parameters, the namespaces inside its template arguments
 * and its own namespaces, and is then cut with "…" at the end.  Names that
 * would print alike show their head, "…" and the part where they differ;
 * those that still read the same get " #1", " #2", ... in the order of their
 * full names.  Equal names get equal texts.  shown (may be NULL) gives the
 * text to start from when it is not the name itself (the readable prefix of
 * a mangled name); names alone decide what is equal.  out[i] is malloc'd
 * (free each and out).  Returns 0, or -ENOMEM with out[] all NULL. */
int names_shorten(const char *const *names, const char *const *shown, size_t n, size_t width,
		  char **out);

/* Display width of a UTF-8 string in columns (one per code point). */
size_t names_width(const char *s);

#endif
