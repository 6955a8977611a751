/* tools/ncc/ctime.h — where a command's compile time went (--time-passes,
 * `ncc bench --json`'s "compile_breakdown"): the driver's own clocks for
 * import and the pipeline, the pass manager's per-pass times and libncc's
 * ncc_compile_stats for the backend, added up against the measured total.
 */
#ifndef NCC_TOOLS_CTIME_H
#define NCC_TOOLS_CTIME_H

#include "cli.h"

#define CLI_CTIME_MAX_PASSES 256

typedef struct cli_ctime {
  double import_ms;   /* cli_load_model */
  double pipeline_ms; /* the whole ncc_pipeline_run */
  int n_passes;
  const char *pass[CLI_CTIME_MAX_PASSES];
  double pass_ms[CLI_CTIME_MAX_PASSES];
  ncc_compile_stats lib; /* the compile or emit call */
  double compile_ms;     /* the command's measured compile time */
  const char *cache_dir; /* the compile cache used, or NULL */
} cli_ctime;

/* Load `path` into *g, timing it. */
ncc_status cli_ctime_load(cli_ctime *ct, const char *path, ncc_graph **g);
/* cli_pipeline_run, keeping each pass's time (the same reports on
 * stderr: --print-after, --time-passes' pass table). */
ncc_status cli_ctime_pipeline(cli_ctime *ct, ncc_graph *g, const cli_opts *o,
                              int64_t batch, const char **ran, int cap, int *n_ran);
/* o->lib with compile_stats pointing into ct. */
ncc_options cli_ctime_options(cli_ctime *ct, const cli_opts *o);
/* Print `"compile_breakdown": {...}` (no separator before it). */
void cli_ctime_json(const cli_ctime *ct);
/* The "compile time" table and the `top` kernels by compile time. */
void cli_ctime_table(const cli_ctime *ct, FILE *f, int top);
void cli_ctime_free(cli_ctime *ct);

#endif /* NCC_TOOLS_CTIME_H */
