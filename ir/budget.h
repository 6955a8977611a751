/* ir/budget.h — the process-wide memory budget (ncc_set_max_memory).
 *
 * Sizes that come from a model (folded constants, parsed constants,
 * planned arenas, run-time shapes) are checked against the budget before
 * anything is allocated, so a small model cannot ask for more memory than
 * the machine has: the check fails with NCC_ERR_NOMEM and a message that
 * names what would be allocated, its size and the budget. */
#ifndef NCC_BUDGET_H
#define NCC_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* The budget in bytes (the default when none was set). */
size_t ncc_budget_bytes(void);

/* Whether `bytes` (negative: does not fit in int64) fits the budget. */
bool ncc_budget_fits(int64_t bytes);

/* NCC_OK when `bytes` fits; otherwise NCC_ERR_NOMEM with the message
 * "<what> would allocate 64.0 GiB, over the memory budget of 17.6 GiB
 * (--max-memory)". `what` names the node, constant or value. */
ncc_status ncc_budget_check(int64_t bytes, const char *what);

/* "17.6 GiB", "512 B": bytes in binary units, one decimal. */
void ncc_format_bytes(double bytes, char *buf, size_t cap);

#endif /* NCC_BUDGET_H */
