/* tools/ncc/cmd_ops.c — `ncc ops`: the ops ncc supports, generated from
 * libncc's op table (ncc_op_count, ncc_op_describe) and each target's own
 * "can it compile this op" hook (ncc_op_target_compiles), so the list
 * cannot drift from ir/ops.def. docs/OPS.md is this output as Markdown
 * (tools/update-ops-doc.py). A row says, per target, whether the op's
 * common form compiles ("compiled") or runs on its reference kernel
 * ("ref"); `ncc check MODEL --target=T` answers the same per model. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "f32,f16,..." from a dtype bit set; "-" when empty. */
static const char *dtype_list(unsigned bits, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int dt = 1; dt < NCC_DT_COUNT && n < cap; dt++)
    if (bits & (1u << dt))
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", ncc_dtype_name((ncc_dtype)dt));
  if (!buf[0]) snprintf(buf, cap, "-");
  return buf;
}

static void json_dtypes(unsigned bits) {
  printf("[");
  bool first = true;
  for (int dt = 1; dt < NCC_DT_COUNT; dt++)
    if (bits & (1u << dt)) {
      printf("%s\"%s\"", first ? "" : ", ", ncc_dtype_name((ncc_dtype)dt));
      first = false;
    }
  printf("]");
}

static void opset_text(const ncc_op_desc *d, char *buf, size_t cap) {
  if (d->opset_min) snprintf(buf, cap, "%d-%d", d->opset_min, d->opset_max);
  else snprintf(buf, cap, "-");
}

ncc_status cmd_ops(const cli_opts *o) {
  /* the targets: all of them, or the one --target names */
  const char *names[16];
  int nt = 0;
  if (o->target_set) {
    if (!cli_target_known(o->target)) return cli_target_check(o->target);
    names[nt++] = o->target;
  } else {
    ncc_target_desc td;
    for (int i = 0; i < ncc_target_count() && nt < 16; i++)
      if (ncc_target_get(i, &td) == NCC_OK) names[nt++] = td.name;
  }
  int n = ncc_op_count();
  if (o->json) printf("{\"count\": %d, \"targets\": [", n);
  else {
    printf("%-26s %-8s %-7s", "OP", "DOMAIN", "OPSETS");
    for (int t = 0; t < nt; t++) printf(" %-8s", names[t]);
    printf(" DTYPES\n");
  }
  if (o->json) {
    for (int t = 0; t < nt; t++) {
      printf("%s", t ? ", " : "");
      cli_json_string(names[t]);
    }
    printf("], \"ops\": [");
  }
  int compiled[16] = {0};
  for (int i = 0; i < n; i++) {
    ncc_op_desc d;
    ncc_status st = ncc_op_describe(i, &d);
    if (st) return st;
    unsigned tb[16];
    for (int t = 0; t < nt; t++) {
      if ((st = ncc_op_target_compiles(i, names[t], &tb[t]))) return st;
      compiled[t] += tb[t] != 0;
    }
    char opsets[32], dts[256];
    opset_text(&d, opsets, sizeof opsets);
    if (!o->json) {
      printf("%-26s %-8s %-7s", d.name, d.domain, opsets);
      for (int t = 0; t < nt; t++) printf(" %-8s", tb[t] ? "compiled" : "ref");
      printf(" %s\n", dtype_list(d.dtypes, dts, sizeof dts));
      continue;
    }
    printf("%s\n  {\"name\": ", i ? "," : "");
    cli_json_string(d.name);
    printf(", \"domain\": \"%s\", \"opset_min\": %d, \"opset_max\": %d, "
           "\"inputs\": [%d, %d], \"outputs\": [%d, %d], \"dtypes\": ",
           d.domain, d.opset_min, d.opset_max, d.min_inputs, d.max_inputs,
           d.min_outputs, d.max_outputs);
    json_dtypes(d.dtypes);
    printf(", \"targets\": {");
    for (int t = 0; t < nt; t++) {
      printf("%s", t ? ", " : "");
      cli_json_string(names[t]);
      printf(": {\"compiled\": %s, \"dtypes\": ", tb[t] ? "true" : "false");
      json_dtypes(tb[t]);
      printf("}");
    }
    printf("}}");
  }
  if (o->json) {
    printf("\n]}\n");
    return NCC_OK;
  }
  printf("\n%d ops.", n);
  for (int t = 0; t < nt; t++) printf(" %s compiles %d.", names[t], compiled[t]);
  printf("\n'compiled': the op's common f32 form has a kernel for the target; 'ref':\n"
         "it runs on its reference kernel there. Other forms may still run on the\n"
         "host: 'ncc check MODEL --target=T' tells per model.\n");
  return NCC_OK;
}
