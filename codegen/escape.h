/* codegen/escape.h — the trust boundary between model bytes and generated
 * source.
 *
 * A model's names (graph, values, nodes, symbolic dims) are bytes chosen by
 * whoever made the model. Every generated source text — the C header and
 * glue of --emit=lib, CUDA C and OpenCL C — that carries such bytes (or
 * anything built from them: a type string, a file name, a kernel name)
 * writes them through these functions, and through nothing else, so that
 * no name can close a comment, end a string literal, splice a line or
 * become code. Each kind is context-free: its output is safe wherever that
 * kind of text may stand, whatever comes before or after it.
 *
 *   NCC_ESC_IDENT    the tail of a C identifier, after an ncc-chosen head
 *                    that starts with a letter and ends in '_' ("net_k3_"):
 *                    [A-Ya-z0-9] kept, every other byte (also 'Z' and '_')
 *                    becomes 'Z' and two upper-case hex digits, and so does
 *                    a leading digit. Injective (Z always starts a
 *                    three-byte escape), never empty ("" is "Z00"),
 *                    never a leading digit or '_', never "__" (reserved in
 *                    C at the start and in C++ anywhere).
 *   NCC_ESC_CSTR     the body of a "..." literal (C and C++): printable
 *                    ASCII kept but for '"', '\' and '?' (no trigraphs),
 *                    which get a backslash; other bytes are three-digit
 *                    octal escapes. The literal holds exactly the name.
 *   NCC_ESC_COMMENT  text inside a block or line comment: printable ASCII
 *                    kept but for '%' and '\' (never a line splice), a '*'
 *                    before '/' or at the end, a '/' before '*' or at the
 *                    start, and a '?' before '?' (no trigraph); those and
 *                    every byte outside printable ASCII become "%XX".
 */
#ifndef NCC_CODEGEN_ESCAPE_H
#define NCC_CODEGEN_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { NCC_ESC_IDENT, NCC_ESC_CSTR, NCC_ESC_COMMENT } ncc_esc_kind;

/* The escaped form of s (NULL: ""), as snprintf: at most cap-1 bytes and
 * a NUL in buf (buf may be NULL when cap is 0); returns the full length. A
 * truncated result is cut between escapes, never inside one. */
size_t ncc_escape(ncc_esc_kind kind, const char *s, char *buf, size_t cap);

/* The escaped form in a fresh ncc_malloc'd string; NULL when out of
 * memory (free with ncc_free(p, 0)). */
char *ncc_escape_dup(ncc_esc_kind kind, const char *s);

/* Write the escaped form of s to f. */
void ncc_escape_fput(FILE *f, ncc_esc_kind kind, const char *s);

/* The API prefix of a generated library from a file's base name, made a
 * readable C identifier (not injective: one per library): [A-Za-z0-9]
 * kept, runs of other bytes become one '_', no leading or trailing '_',
 * an 'm' before a leading digit or for an empty result; at most cap-1
 * bytes (cap >= 2). */
void ncc_escape_api_prefix(const char *base, size_t len, char *buf, size_t cap);

/* A kernel's symbol: head (ncc's, e.g. "net_k3_": a letter first, '_'
 * last), the op name as NCC_ESC_IDENT, then tail (ncc's, e.g. "_fused").
 * The one way kernel names are made for the CPU JIT, --emit=lib and the
 * GPU sources. At most cap-1 bytes, cut between escapes. */
void ncc_escape_kernel_name(char *buf, size_t cap, const char *head, const char *op,
                            const char *tail);

/* Whether s is an identifier these rules can make: a letter, then
 * letters, digits and '_' with no "__". Renderers check the kernel names
 * they are handed with it. */
bool ncc_escape_is_ident(const char *s);

#endif
