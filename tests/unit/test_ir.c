/* tests/unit/test_ir.c — the IR core: op table, dtypes, arena, graph
 * building, name table, symbols, attributes, and allocation failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "test_alloc.h"

static void test_op_table(void **state) {
  (void)state;
  assert_int_equal(ncc_op_lookup("Conv", 4), NCC_OP_CONV);
  assert_int_equal(ncc_op_lookup("Gelu", 4), NCC_OP_GELU);
  assert_int_equal(ncc_op_lookup("Con", 3), NCC_OP_COUNT);
  assert_string_equal(ncc_op_name(NCC_OP_BATCHNORM), "BatchNormalization");
  assert_int_equal(ncc_op_table[NCC_OP_CONCAT].max_in, -1);
  assert_true(ncc_op_table[NCC_OP_ADD].flags & NCC_OPF_ELTWISE);
  assert_true(ncc_op_table[NCC_OP_MATMUL].flags & NCC_OPF_CONTRACTION);
  /* every op has a distinct name */
  for (int i = 0; i < NCC_OP_COUNT; i++)
    for (int j = i + 1; j < NCC_OP_COUNT; j++)
      assert_true(strcmp(ncc_op_table[i].name, ncc_op_table[j].name) != 0);
}

static void test_dtypes(void **state) {
  (void)state;
  for (int d = 1; d < NCC_DT_COUNT; d++) {
    const char *nm = ncc_dtype_name((ncc_dtype)d);
    assert_int_equal(ncc_dtype_from_name(nm, strlen(nm)), d);
    assert_true(ncc_dtype_size((ncc_dtype)d) > 0);
  }
  assert_int_equal(ncc_dtype_size(NCC_DT_F16), 2);
  assert_int_equal(ncc_dtype_from_name("f33", 3), NCC_DT_UNDEF);
}

static void test_tensor_limits(void **state) {
  (void)state;
  ncc_tensor t;
  int64_t ok[2] = {3, 4}, neg[2] = {3, -1}, huge[3] = {1 << 20, 1 << 20, 1 << 20};
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, ok), NCC_OK);
  assert_int_equal(ncc_tensor_numel(&t), 12);
  assert_int_equal(ncc_tensor_nbytes(&t), 48);
  ncc_tensor_free(&t);
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, neg), NCC_ERR_INPUT);
  /* 4 EiB: over any memory budget (ncc_set_max_memory), not a bad input */
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 3, huge), NCC_ERR_NOMEM);
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 9, ok), NCC_ERR_UNSUPPORTED);
}

static void test_arena(void **state) {
  (void)state;
  ncc_arena a;
  ncc_arena_init(&a);
  for (int i = 0; i < 1000; i++) {
    unsigned char *p = ncc_arena_alloc(&a, (size_t)(i * 37 % 500) + 1);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    assert_int_equal(p[0], 0);
  }
  void *big = ncc_arena_alloc(&a, 1 << 20);
  assert_non_null(big);
  assert_string_equal(ncc_arena_strndup(&a, "hello world", 5), "hello");
  ncc_arena_release(&a);
}

/* A buffer handed to the arena is freed with it (LeakSanitizer and ASan's
 * double-free check watch the sanitizer build); one not 16-aligned like
 * arena memory is refused and stays the caller's. */
static void test_arena_adopt(void **state) {
  (void)state;
  ncc_arena a;
  ncc_arena_init(&a);
  unsigned char *buf = ncc_malloc(1 << 16);
  assert_non_null(buf);
  buf[0] = 42;
  size_t before = a.used_bytes;
  assert_ptr_equal(ncc_arena_adopt(&a, buf, 1 << 16), buf);
  assert_true(a.used_bytes - before >= (size_t)1 << 16);
  unsigned char *odd = ncc_malloc(64);
  assert_non_null(odd);
  assert_null(ncc_arena_adopt(&a, odd + 1, 63));
  assert_null(ncc_arena_adopt(&a, NULL, 8));
  ncc_free(odd, 64);
  /* still usable after adopting, and the adopted bytes are untouched */
  assert_non_null(ncc_arena_alloc(&a, 100));
  assert_int_equal(buf[0], 42);
  ncc_arena_release(&a);
  assert_null(a.adopted);
  assert_int_equal(a.used_bytes, 0);
}

static ncc_graph *small_graph(void) {
  ncc_graph *g = ncc_graph_new("t");
  if (!g) return NULL;
  int n = ncc_graph_sym(g, "N", 1);
  if (n < 0) goto fail;
  ncc_shape s = {2, {ncc_dim_sym(n), 4}};
  ncc_value *x = ncc_graph_add_value(g, "x", NCC_VAL_INPUT, NCC_DT_F32, &s);
  if (!x || ncc_graph_add_input(g, x)) goto fail;
  float w[4] = {1, 2, 3, 4};
  ncc_shape ws = {1, {4}};
  ncc_value *c = ncc_graph_add_const(g, "w", NCC_DT_F32, &ws, w);
  if (!c) goto fail;
  ncc_value *ins[2] = {x, c};
  ncc_node *add = ncc_graph_add_node(g, NCC_OP_ADD, "add0", 2, ins, 1);
  if (!add) goto fail;
  ncc_value *y = ncc_graph_add_value(g, "y", NCC_VAL_NODE, NCC_DT_F32, &s);
  if (!y) goto fail;
  ncc_node_set_output(add, 0, y);
  if (ncc_node_set_attr_int(g, add, "k", 7) ||
      ncc_node_set_attr_string(g, add, "s", "str")) goto fail;
  int64_t iv[3] = {1, 2, 3};
  if (ncc_node_set_attr_ints(g, add, "is", iv, 3)) goto fail;
  if (ncc_graph_add_output(g, y)) goto fail;
  return g;
fail:
  ncc_graph_free(g);
  return NULL;
}

static void test_graph_build(void **state) {
  (void)state;
  ncc_graph *g = small_graph();
  assert_non_null(g);
  assert_int_equal(ncc_graph_num_inputs(g), 1);
  assert_int_equal(ncc_graph_num_outputs(g), 1);
  assert_int_equal(ncc_graph_num_nodes(g), 1);
  assert_string_equal(ncc_graph_output_name(g, 0), "y");
  assert_null(ncc_graph_input_name(g, 3));
  ncc_value *y = ncc_graph_find_value(g, "y");
  assert_non_null(y);
  assert_ptr_equal(y->producer, g->nodes[0]);
  assert_true(ncc_dim_is_sym(y->shape.d[0]));
  assert_string_equal(ncc_graph_sym_name(g, ncc_dim_sym_id(y->shape.d[0])), "N");
  assert_false(ncc_dim_is_sym(4));
  assert_false(ncc_dim_is_sym(-1));
  /* attributes */
  const ncc_node *n = g->nodes[0];
  assert_int_equal(ncc_attr_int(n, "k", 0), 7);
  assert_int_equal(ncc_attr_int(n, "missing", 42), 42);
  assert_string_equal(ncc_attr_string(n, "s", ""), "str");
  int cnt;
  const int64_t *is = ncc_attr_ints(n, "is", &cnt);
  assert_int_equal(cnt, 3);
  assert_int_equal(is[2], 3);
  char buf[64];
  assert_string_equal(ncc_node_label(n, buf, sizeof buf), "node 'add0' (Add)");
  /* duplicates are refused */
  assert_null(ncc_graph_add_value(g, "x", NCC_VAL_NODE, NCC_DT_F32, NULL));
  assert_non_null(strstr(ncc_error_message(), "defined twice"));
  /* fresh names and symbols do not collide */
  ncc_value *a = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_F32, NULL);
  ncc_value *b = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_F32, NULL);
  assert_non_null(a);
  assert_non_null(b);
  assert_string_not_equal(a->name, b->name);
  int s1 = ncc_graph_fresh_sym(g), s2 = ncc_graph_fresh_sym(g);
  assert_true(s1 >= 0 && s2 >= 0 && s1 != s2);
  assert_int_equal(ncc_graph_sym(g, "N", 1), 0);
  ncc_graph_free(g);
}

static void test_many_values(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new(NULL);
  assert_non_null(g);
  char nm[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(nm, sizeof nm, "v%d", i);
    assert_non_null(ncc_graph_add_value(g, nm, NCC_VAL_NODE, NCC_DT_F32, NULL));
  }
  for (int i = 0; i < 5000; i += 7) {
    snprintf(nm, sizeof nm, "v%d", i);
    ncc_value *v = ncc_graph_find_value(g, nm);
    assert_non_null(v);
    assert_int_equal(v->id, i);
  }
  assert_null(ncc_graph_find_value(g, "v5000"));
  ncc_graph_free(g);
}

static void test_alloc_failure(void **state) {
  (void)state;
  int succeeded = 0;
  for (long k = 0; k < 64 && !succeeded; k++) {
    test_alloc_arm(k);
    ncc_graph *g = small_graph();
    test_alloc_disarm();
    if (g) {
      succeeded = 1;
      ncc_graph_free(g);
    } else {
      assert_non_null(strstr(ncc_error_message(), "out of memory"));
    }
  }
  assert_true(succeeded); /* fewer than 64 allocations are needed */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_op_table),   cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_tensor_limits), cmocka_unit_test(test_arena),
      cmocka_unit_test(test_arena_adopt),
      cmocka_unit_test(test_graph_build), cmocka_unit_test(test_many_values),
      cmocka_unit_test(test_alloc_failure),
  };
  return cmocka_run_group_tests_name("ir", tests, NULL, NULL);
}
