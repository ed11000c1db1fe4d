/* The C API (simplecpp_c.h) exercised from plain C11: loading from bytes and from a file,
 * input/output names, tensors, running, reading results, the error paths (each returns a status
 * with the right code and a message), and freeing everything (the sanitizer build checks leaks).
 *
 * C cannot use the project's C++ ONNX writer, so the test assembles its models itself with a few
 * protobuf helpers below. The main model is
 *   ModelProto { ir_version: 8, opset_import { domain: "", version: 17 }, producer_name: "c_api_test",
 *     graph { name: "add", node { input: "x", input: "y", output: "z", op_type: "Add" },
 *             input { x: float32 [2,3] }, input { y: float32 [2,3] }, output { z: float32 [2,3] } } }
 *
 * argv[1] (optional): a writable folder (the build's bin dir) for the file-loading check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simplecpp/simplecpp_c.h"

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    ++g_checks;                                                         \
    if (!(cond)) {                                                      \
      ++g_failures;                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                   \
  } while (0)

/* Expects success; on failure prints the status message and frees it. */
#define CHECK_OK(call)                                                              \
  do {                                                                              \
    sc_status* st_ = (call);                                                        \
    ++g_checks;                                                                     \
    if (st_ != NULL) {                                                              \
      ++g_failures;                                                                 \
      fprintf(stderr, "%s:%d: %s failed: code %d: %s\n", __FILE__, __LINE__, #call, \
              (int)sc_status_code(st_), sc_status_message(st_));                    \
      sc_status_free(st_);                                                          \
    }                                                                               \
  } while (0)

/* Expects an error with `code` and a non-empty message. */
static void check_error(sc_status* st, int32_t code, const char* what) {
  ++g_checks;
  if (st == NULL) {
    ++g_failures;
    fprintf(stderr, "%s: expected error code %d, got success\n", what, (int)code);
    return;
  }
  const char* msg = sc_status_message(st);
  if (sc_status_code(st) != code || msg == NULL || msg[0] == '\0') {
    ++g_failures;
    fprintf(stderr, "%s: expected error code %d, got %d: %s\n", what, (int)code,
            (int)sc_status_code(st), msg ? msg : "(null)");
  } else {
    printf("  expected error (%s): %s\n", what, msg);
  }
  sc_status_free(st);
}

/* ---- a minimal protobuf writer (wire types 0 = varint, 2 = length-delimited) ---- */

typedef struct {
  unsigned char data[2048];
  size_t size;
} Buf;

static void put_byte(Buf* b, unsigned char c) {
  if (b->size >= sizeof(b->data)) {
    fprintf(stderr, "protobuf buffer overflow\n");
    exit(2);
  }
  b->data[b->size++] = c;
}
static void put_varint(Buf* b, uint64_t v) {
  while (v >= 0x80) {
    put_byte(b, (unsigned char)(v | 0x80));
    v >>= 7;
  }
  put_byte(b, (unsigned char)v);
}
static void put_int(Buf* b, int field, uint64_t v) {
  put_varint(b, ((uint64_t)field << 3) | 0);
  put_varint(b, v);
}
static void put_bytes(Buf* b, int field, const void* data, size_t n) {
  put_varint(b, ((uint64_t)field << 3) | 2);
  put_varint(b, n);
  for (size_t i = 0; i < n; ++i) put_byte(b, ((const unsigned char*)data)[i]);
}
static void put_str(Buf* b, int field, const char* s) { put_bytes(b, field, s, strlen(s)); }
static void put_msg(Buf* b, int field, const Buf* m) { put_bytes(b, field, m->data, m->size); }

/* ValueInfoProto { name: 1, type: 2 { tensor_type: 1 { elem_type: 1, shape: 2 { dim: 1 { dim_value: 1 } } } } };
 * a negative dim is written as dim_param "batch" (Dimension field 2). */
static void put_value_info(Buf* b, int field, const char* name, int32_t elem_type,
                           const int64_t* dims, int rank) {
  Buf shape = {{0}, 0}, tensor = {{0}, 0}, type = {{0}, 0}, vi = {{0}, 0};
  for (int i = 0; i < rank; ++i) {
    Buf dim = {{0}, 0};
    if (dims[i] < 0) {
      put_str(&dim, 2, "batch");
    } else {
      put_int(&dim, 1, (uint64_t)dims[i]);
    }
    put_msg(&shape, 1, &dim);
  }
  put_int(&tensor, 1, (uint64_t)elem_type);
  put_msg(&tensor, 2, &shape);
  put_msg(&type, 1, &tensor);
  put_str(&vi, 1, name);
  put_msg(&vi, 2, &type);
  put_msg(b, field, &vi);
}

/* A one-node model: z = op_type(x, y), all float32 [2,3], x declared with x_dims. */
static void build_model_x(Buf* model, const char* op_type, const int64_t* x_dims) {
  const int64_t dims[2] = {2, 3};
  Buf node = {{0}, 0}, graph = {{0}, 0}, opset = {{0}, 0};
  put_str(&node, 1, "x");       /* NodeProto.input */
  put_str(&node, 1, "y");
  put_str(&node, 2, "z");       /* NodeProto.output */
  put_str(&node, 3, "the_add"); /* NodeProto.name */
  put_str(&node, 4, op_type);   /* NodeProto.op_type */
  put_msg(&graph, 1, &node);    /* GraphProto.node */
  put_str(&graph, 2, "add");    /* GraphProto.name */
  put_value_info(&graph, 11, "x", 1, x_dims, 2); /* GraphProto.input */
  put_value_info(&graph, 11, "y", 1, dims, 2);
  put_value_info(&graph, 12, "z", 1, dims, 2); /* GraphProto.output */
  put_str(&opset, 1, "");       /* OperatorSetIdProto.domain */
  put_int(&opset, 2, 17);       /* OperatorSetIdProto.version */
  model->size = 0;
  put_int(model, 1, 8);               /* ModelProto.ir_version */
  put_str(model, 2, "c_api_test");    /* ModelProto.producer_name */
  put_msg(model, 7, &graph);          /* ModelProto.graph */
  put_msg(model, 8, &opset);          /* ModelProto.opset_import */
}

/* The same with x declared [2,3] too (every shape known at load). */
static void build_model(Buf* model, const char* op_type) {
  const int64_t dims[2] = {2, 3};
  build_model_x(model, op_type, dims);
}

/* Runs the Add model once and checks z = x + y. */
static void run_add(const sc_model* model) {
  sc_session* session = NULL;
  CHECK_OK(sc_session_create(model, 1, &session));
  if (session == NULL) return;

  const int64_t dims[2] = {2, 3};
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const float y[6] = {0.5f, -1, 10, 0, -4.25f, 100};
  sc_tensor* tx = NULL;
  sc_tensor* ty = NULL;
  CHECK_OK(sc_tensor_create(1, dims, 2, x, sizeof(x), &tx));
  CHECK_OK(sc_tensor_create(1, dims, 2, y, sizeof(y), &ty));
  const char* in_names[2] = {"x", "y"};
  const sc_tensor* ins[2] = {tx, ty};
  const char* out_names[1] = {"z"};
  sc_tensor* outs[1] = {NULL};
  CHECK_OK(sc_session_run(session, in_names, ins, 2, out_names, 1, outs));
  if (outs[0] != NULL) {
    CHECK(sc_tensor_dtype(outs[0]) == 1);
    CHECK(sc_tensor_rank(outs[0]) == 2);
    int64_t out_dims[4] = {0, 0, 0, 0};
    CHECK_OK(sc_tensor_dims(outs[0], out_dims, 4));
    CHECK(out_dims[0] == 2 && out_dims[1] == 3);
    CHECK(sc_tensor_byte_size(outs[0]) == sizeof(x));
    const float* z = (const float*)sc_tensor_data(outs[0]);
    float copy[6];
    CHECK_OK(sc_tensor_copy_data(outs[0], copy, sizeof(copy)));
    for (int i = 0; i < 6; ++i) {
      CHECK(z != NULL && fabsf(z[i] - (x[i] + y[i])) <= 1e-6f);
      CHECK(fabsf(copy[i] - (x[i] + y[i])) <= 1e-6f);
    }
    float small[2];
    check_error(sc_tensor_copy_data(outs[0], small, sizeof(small)), SC_ERR_INVALID_ARGUMENT,
                "copy into a too-small buffer");
    sc_tensor_free(outs[0]);
  }

  /* Memory statistics: some working memory was used; a second run with the first run's output
   * released obtains no new buffer. */
  int64_t peak = -1, allocations = -1, allocations_again = -1;
  CHECK_OK(sc_session_memory_stats(session, &peak, &allocations));
  CHECK(peak >= (int64_t)sizeof(x) && allocations >= 1);
  outs[0] = NULL;
  CHECK_OK(sc_session_run(session, in_names, ins, 2, out_names, 1, outs));
  if (outs[0] != NULL) sc_tensor_free(outs[0]);
  CHECK_OK(sc_session_memory_stats(session, NULL, &allocations_again));
  CHECK(allocations_again == allocations);
  check_error(sc_session_memory_stats(NULL, &peak, NULL), SC_ERR_INVALID_ARGUMENT,
              "memory stats of a NULL session");

  /* Error paths of run: an unknown input name, a missing input, an unknown output name. */
  const char* bad_names[2] = {"x", "nope"};
  outs[0] = NULL;
  check_error(sc_session_run(session, bad_names, ins, 2, out_names, 1, outs),
              SC_ERR_INVALID_ARGUMENT, "run with an unknown input name");
  CHECK(outs[0] == NULL);
  check_error(sc_session_run(session, in_names, ins, 1, out_names, 1, outs),
              SC_ERR_INVALID_ARGUMENT, "run with a missing input");
  const char* bad_out[1] = {"w"};
  check_error(sc_session_run(session, in_names, ins, 2, bad_out, 1, outs), SC_ERR_INVALID_ARGUMENT,
              "run asking for an unknown output");

  /* A wrong shape: [3,2] instead of [2,3] must be refused, not read out of bounds. */
  const int64_t wrong_dims[2] = {3, 2};
  sc_tensor* tw = NULL;
  CHECK_OK(sc_tensor_create(1, wrong_dims, 2, y, sizeof(y), &tw));
  const sc_tensor* wrong_ins[2] = {tx, tw};
  sc_status* st = sc_session_run(session, in_names, wrong_ins, 2, out_names, 1, outs);
  ++g_checks;
  if (st == NULL) {
    ++g_failures;
    fprintf(stderr, "run with mismatched shapes succeeded\n");
    if (outs[0] != NULL) sc_tensor_free(outs[0]);
  } else {
    printf("  expected error (mismatched shapes): code %d: %s\n", (int)sc_status_code(st),
           sc_status_message(st));
    sc_status_free(st);
  }

  sc_tensor_free(tw);
  sc_tensor_free(tx);
  sc_tensor_free(ty);
  sc_session_free(session);
}

/* z = If(c) { then: z = Identity(x) } else { z = Identity(x) }: one level of subgraph. */
static void build_if_model(Buf* model) {
  const int64_t dims[2] = {2, 3};
  Buf node = {{0}, 0}, graph = {{0}, 0}, opset = {{0}, 0};
  const char* branches[2] = {"then_branch", "else_branch"};
  put_str(&node, 1, "c");
  put_str(&node, 2, "z");
  put_str(&node, 3, "the_if");
  put_str(&node, 4, "If");
  for (int b = 0; b < 2; ++b) {
    Buf sub_node = {{0}, 0}, sub = {{0}, 0}, attr = {{0}, 0};
    put_str(&sub_node, 1, "x");
    put_str(&sub_node, 2, b == 0 ? "t" : "e");
    put_str(&sub_node, 4, "Identity");
    put_msg(&sub, 1, &sub_node);
    put_str(&sub, 2, branches[b]);
    put_value_info(&sub, 12, b == 0 ? "t" : "e", 1, dims, 2);
    put_str(&attr, 1, branches[b]); /* AttributeProto.name */
    put_int(&attr, 20, 5);          /* AttributeProto.type = GRAPH */
    put_msg(&attr, 6, &sub);        /* AttributeProto.g */
    put_msg(&node, 5, &attr);       /* NodeProto.attribute */
  }
  put_msg(&graph, 1, &node);
  put_str(&graph, 2, "if");
  put_value_info(&graph, 11, "c", 9, NULL, 0);
  put_value_info(&graph, 11, "x", 1, dims, 2);
  put_value_info(&graph, 12, "z", 1, dims, 2);
  put_str(&opset, 1, "");
  put_int(&opset, 2, 17);
  model->size = 0;
  put_int(model, 1, 8);
  put_msg(model, 7, &graph);
  put_msg(model, 8, &opset);
}

/* Checks that the message of an expected limit error names the limit. */
static void check_limit(sc_status* st, const char* limit_name, const char* what) {
  ++g_checks;
  if (st == NULL || sc_status_code(st) != SC_ERR_LIMIT_EXCEEDED ||
      strstr(sc_status_message(st), limit_name) == NULL) {
    ++g_failures;
    fprintf(stderr, "%s: expected SC_ERR_LIMIT_EXCEEDED naming %s, got %d: %s\n", what,
            limit_name, st ? (int)sc_status_code(st) : 0, st ? sc_status_message(st) : "success");
  } else {
    printf("  expected limit error (%s): %s\n", what, sc_status_message(st));
  }
  sc_status_free(st);
}

/* Every resource limit through sc_load_options. The Add model has 1 node, no subgraph, and
 * tensors of 6 float32 elements (24 bytes). */
static void test_limits(const Buf* add, const char* dir) {
  sc_load_options* o = NULL;
  sc_model* m = NULL;
  CHECK_OK(sc_load_options_create(&o));
  if (o == NULL) return;

  /* Defaults (and NULL options) load. */
  CHECK_OK(sc_model_load_bytes_with_options(add->data, add->size, o, &m));
  sc_model_free(m);
  m = NULL;
  CHECK_OK(sc_model_load_bytes_with_options(add->data, add->size, NULL, &m));
  sc_model_free(m);
  m = NULL;

  check_error(sc_load_options_set_max_nodes(o, -1), SC_ERR_INVALID_ARGUMENT, "negative limit");
  check_error(sc_load_options_set_max_total_bytes(NULL, 1), SC_ERR_INVALID_ARGUMENT,
              "NULL options");

  CHECK_OK(sc_load_options_set_max_model_bytes(o, (int64_t)add->size - 1));
  check_limit(sc_model_load_bytes_with_options(add->data, add->size, o, &m), "max_model_bytes",
              "model bytes");
  CHECK(m == NULL);
  if (dir != NULL) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/c_api_test_limits.onnx", dir);
    FILE* f = fopen(path, "wb");
    if (f != NULL) {
      fwrite(add->data, 1, add->size, f);
      fclose(f);
      check_limit(sc_model_load_with_options(path, o, &m), "max_model_bytes", "model file bytes");
      CHECK(m == NULL);
      remove(path);
    }
  }
  CHECK_OK(sc_load_options_set_max_model_bytes(o, (int64_t)add->size));
  CHECK_OK(sc_model_load_bytes_with_options(add->data, add->size, o, &m));
  sc_model_free(m);
  m = NULL;

  CHECK_OK(sc_load_options_set_max_nodes(o, 0));
  check_limit(sc_model_load_bytes_with_options(add->data, add->size, o, &m), "max_nodes", "nodes");
  CHECK_OK(sc_load_options_set_max_nodes(o, 1));

  /* z is [2,3] at load (static shapes): 6 elements, 24 bytes. */
  CHECK_OK(sc_load_options_set_max_tensor_elements(o, 5));
  check_limit(sc_model_load_bytes_with_options(add->data, add->size, o, &m), "max_tensor_elements",
              "tensor elements");
  CHECK_OK(sc_load_options_set_max_tensor_elements(o, 6));
  CHECK_OK(sc_load_options_set_max_tensor_bytes(o, 23));
  check_limit(sc_model_load_bytes_with_options(add->data, add->size, o, &m), "max_tensor_bytes",
              "tensor bytes");
  CHECK_OK(sc_load_options_set_max_tensor_bytes(o, 24));

  /* Working memory: the model loads, the run needs a 24-byte buffer (a 64-byte size class). */
  CHECK_OK(sc_load_options_set_max_total_bytes(o, 16));
  CHECK_OK(sc_model_load_bytes_with_options(add->data, add->size, o, &m));
  if (m != NULL) {
    sc_session* session = NULL;
    CHECK_OK(sc_session_create(m, 1, &session));
    const int64_t dims[2] = {2, 3};
    const float x[6] = {1, 2, 3, 4, 5, 6};
    sc_tensor* t = NULL;
    CHECK_OK(sc_tensor_create(1, dims, 2, x, sizeof(x), &t));
    const char* in_names[2] = {"x", "y"};
    const sc_tensor* ins[2] = {t, t};
    const char* out_names[1] = {"z"};
    sc_tensor* outs[1] = {NULL};
    if (session != NULL && t != NULL) {
      check_limit(sc_session_run(session, in_names, ins, 2, out_names, 1, outs), "max_total_bytes",
                  "working memory");
      CHECK(outs[0] == NULL);
    }
    sc_tensor_free(t);
    sc_session_free(session);
    sc_model_free(m);
    m = NULL;
  }

  /* Subgraph depth: the If model nests one level. */
  Buf if_model = {{0}, 0};
  build_if_model(&if_model);
  CHECK_OK(sc_load_options_set_max_total_bytes(o, 1 << 20));
  CHECK_OK(sc_load_options_set_max_nodes(o, 3));
  CHECK_OK(sc_load_options_set_max_model_bytes(o, 1 << 20));
  CHECK_OK(sc_model_load_bytes_with_options(if_model.data, if_model.size, o, &m));
  sc_model_free(m);
  m = NULL;
  CHECK_OK(sc_load_options_set_max_graph_depth(o, 0));
  check_limit(sc_model_load_bytes_with_options(if_model.data, if_model.size, o, &m),
              "max_graph_depth", "graph depth");
  CHECK(m == NULL);
  /* Nodes are counted across subgraphs: If + 2 Identity = 3. */
  CHECK_OK(sc_load_options_set_max_graph_depth(o, 4));
  CHECK_OK(sc_load_options_set_max_nodes(o, 2));
  check_limit(sc_model_load_bytes_with_options(if_model.data, if_model.size, o, &m), "max_nodes",
              "nodes in subgraphs");

  CHECK_OK(sc_load_options_set_constant_folding(o, 0));
  CHECK_OK(sc_load_options_set_external_data_dir(o, NULL));
  sc_load_options_free(o);
  sc_load_options_free(NULL);
}

/* The graph builder, attributes and eager ops: a MatMulInteger with per-column b zero points,
 * built, inspected, run, exported and reloaded, and the same node through sc_run_op, all against
 * the reference computed here; then named errors. */
static void test_builder(void) {
  const uint8_t a[6] = {200, 3, 77, 0, 255, 128};
  const int8_t b[6] = {-128, 127, 5, -7, 64, 0};
  const uint8_t a_zp = 129;
  const int8_t b_zp[2] = {3, -1};
  int32_t want[4];
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      int32_t acc = 0;
      for (int k = 0; k < 3; ++k) acc += ((int32_t)a[i * 3 + k] - a_zp) * ((int32_t)b[k * 2 + j] - b_zp[j]);
      want[i * 2 + j] = acc;
    }
  }
  sc_graph_builder* gb = NULL;
  CHECK_OK(sc_builder_create(13, &gb));
  if (gb == NULL) return;
  const int64_t a_dims[2] = {-1, 3};
  const char* a_names[2] = {"rows", NULL};
  CHECK_OK(sc_builder_add_input(gb, "A", 2, a_dims, 2, a_names));
  const int64_t b_dims[2] = {3, 2}, zp_dims[1] = {2};
  CHECK_OK(sc_builder_add_initializer_borrowed(gb, "B", 3, b_dims, 2, b, sizeof(b)));
  sc_tensor* t = NULL;
  CHECK_OK(sc_tensor_create(2, NULL, 0, &a_zp, 1, &t));
  CHECK_OK(sc_builder_add_initializer(gb, "a_zp", t));
  sc_tensor_free(t);
  CHECK_OK(sc_builder_add_initializer_borrowed(gb, "b_zp", 3, zp_dims, 1, b_zp, sizeof(b_zp)));
  const char* inputs[4] = {"A", "B", "a_zp", "b_zp"};
  const char* out = NULL;
  CHECK_OK(sc_builder_add_node(gb, NULL, "MatMulInteger", "mmi", inputs, 4, NULL, 1, &out));
  CHECK(out != NULL);
  int32_t dtype = 0;
  int64_t rank = 0, dims[2] = {0, 0};
  if (out != NULL) {
    CHECK_OK(sc_builder_value_type(gb, out, &dtype, &rank));
    CHECK(dtype == 6 && rank == 2);
    CHECK_OK(sc_builder_value_dims(gb, out, dims, 2));
    CHECK(dims[0] == -1 && dims[1] == 2);
    CHECK_OK(sc_builder_add_output(gb, out));
  }
  /* Errors name the op and leave the builder usable. */
  check_error(sc_builder_add_node(gb, NULL, "NoSuchOp", "bad", inputs, 1, NULL, 1, NULL),
              SC_ERR_UNSUPPORTED, "unknown op");
  sc_attributes* attrs = NULL;
  CHECK_OK(sc_attributes_create(&attrs));
  CHECK_OK(sc_attributes_set_float(attrs, "axis", 1.5f));
  check_error(sc_builder_add_node(gb, NULL, "Softmax", "soft", inputs, 1, attrs, 1, NULL),
              SC_ERR_INVALID_MODEL, "attribute of the wrong type");
  const char* dangling[1] = {"nowhere"};
  check_error(sc_builder_add_node(gb, NULL, "Relu", "r", dangling, 1, NULL, 1, NULL),
              SC_ERR_INVALID_MODEL, "dangling input");

  const int64_t a_run[2] = {2, 3};
  sc_tensor* at = NULL;
  CHECK_OK(sc_tensor_create(2, a_run, 2, a, sizeof(a), &at));
  sc_model* model = NULL;
  CHECK_OK(sc_builder_build(gb, NULL, &model));
  void* onnx = NULL;
  size_t onnx_size = 0;
  CHECK_OK(sc_builder_to_onnx(gb, &onnx, &onnx_size));
  sc_model* reloaded = NULL;
  if (onnx != NULL) CHECK_OK(sc_model_load_bytes(onnx, onnx_size, &reloaded));
  sc_buffer_free(onnx);
  sc_model* models[2] = {model, reloaded};
  for (int m = 0; m < 2; ++m) {
    if (models[m] == NULL || out == NULL || at == NULL) continue;
    sc_session* s = NULL;
    CHECK_OK(sc_session_create(models[m], 1, &s));
    const char* in_names[1] = {"A"};
    const sc_tensor* in_tensors[1] = {at};
    sc_tensor* y = NULL;
    CHECK_OK(sc_session_run(s, in_names, in_tensors, 1, &out, 1, &y));
    CHECK(y != NULL && sc_tensor_dtype(y) == 6 && sc_tensor_byte_size(y) == sizeof(want));
    if (y != NULL) CHECK(memcmp(sc_tensor_data(y), want, sizeof(want)) == 0);
    sc_tensor_free(y);
    sc_session_free(s);
    sc_model_free(models[m]);
  }

  /* The eager form. */
  sc_tensor* bt = NULL;
  sc_tensor* azt = NULL;
  sc_tensor* bzt = NULL;
  CHECK_OK(sc_tensor_create(3, b_dims, 2, b, sizeof(b), &bt));
  CHECK_OK(sc_tensor_create(2, NULL, 0, &a_zp, 1, &azt));
  CHECK_OK(sc_tensor_create(3, zp_dims, 1, b_zp, sizeof(b_zp), &bzt));
  const sc_tensor* op_in[4] = {at, bt, azt, bzt};
  sc_tensor* y = NULL;
  CHECK_OK(sc_run_op(NULL, "MatMulInteger", 10, op_in, 4, NULL, 1, &y));
  if (y != NULL) CHECK(memcmp(sc_tensor_data(y), want, sizeof(want)) == 0);
  sc_tensor_free(y);
  /* Split with an attribute and three outputs. */
  sc_tensor* parts[3] = {NULL, NULL, NULL};
  CHECK_OK(sc_attributes_set_int(attrs, "axis", 1)); /* replaces the float */
  const sc_tensor* split_in[1] = {at};
  CHECK_OK(sc_run_op("", "Split", 13, split_in, 1, attrs, 3, parts));
  for (int k = 0; k < 3; ++k) {
    CHECK(parts[k] != NULL && sc_tensor_byte_size(parts[k]) == 2);
    if (parts[k] != NULL) CHECK(((const uint8_t*)sc_tensor_data(parts[k]))[1] == a[3 + k]);
    sc_tensor_free(parts[k]);
  }
  check_error(sc_run_op(NULL, "NoSuchOp", 13, split_in, 1, NULL, 1, &y), SC_ERR_UNSUPPORTED,
              "eager unknown op");
  sc_attributes_free(attrs);
  sc_tensor_free(at);
  sc_tensor_free(bt);
  sc_tensor_free(azt);
  sc_tensor_free(bzt);
  sc_builder_free(gb);
}

int main(int argc, char** argv) {
  Buf bytes = {{0}, 0};
  build_model(&bytes, "Add");

  /* Load from bytes; names and counts. */
  sc_model* model = NULL;
  CHECK_OK(sc_model_load_bytes(bytes.data, bytes.size, &model));
  if (model != NULL) {
    int64_t n_in = -1, n_out = -1;
    CHECK_OK(sc_model_input_count(model, &n_in));
    CHECK_OK(sc_model_output_count(model, &n_out));
    CHECK(n_in == 2);
    CHECK(n_out == 1);
    const char* name = NULL;
    CHECK_OK(sc_model_input_name(model, 0, &name));
    CHECK(name != NULL && strcmp(name, "x") == 0);
    CHECK_OK(sc_model_input_name(model, 1, &name));
    CHECK(name != NULL && strcmp(name, "y") == 0);
    CHECK_OK(sc_model_output_name(model, 0, &name));
    CHECK(name != NULL && strcmp(name, "z") == 0);
    check_error(sc_model_input_name(model, 2, &name), SC_ERR_INVALID_ARGUMENT,
                "input index out of range");
    check_error(sc_model_output_name(model, -1, &name), SC_ERR_INVALID_ARGUMENT,
                "output index out of range");
    run_add(model);
    sc_model_free(model);
    /* Declared types: x float32 [batch, 3], z float32 [2, 3]. */
    const int64_t x_dims[2] = {-1, 3};
    build_model_x(&bytes, "Add", x_dims);
    model = NULL;
    CHECK_OK(sc_model_load_bytes(bytes.data, bytes.size, &model));
    if (model == NULL) return 1;  /* reported by CHECK_OK */
    int32_t kind = -1, dtype = -1;
    int64_t rank = -2;
    int64_t dims[4] = {0, 0, 0, 0};
    CHECK_OK(sc_model_input_type(model, 0, &kind, &dtype, &rank));
    CHECK(kind == SC_VALUE_TENSOR && dtype == 1 && rank == 2);
    CHECK_OK(sc_model_input_dims(model, 0, dims, 4));
    CHECK(dims[0] == -1 && dims[1] == 3);
    CHECK_OK(sc_model_input_dim_name(model, 0, 0, &name));
    CHECK(name != NULL && strcmp(name, "batch") == 0);
    CHECK_OK(sc_model_input_dim_name(model, 0, 1, &name));
    CHECK(name != NULL && strcmp(name, "") == 0);
    CHECK_OK(sc_model_output_type(model, 0, NULL, &dtype, &rank));
    CHECK(dtype == 1 && rank == 2);
    CHECK_OK(sc_model_output_dims(model, 0, dims, 2));
    CHECK(dims[0] == 2 && dims[1] == 3);
    check_error(sc_model_output_dims(model, 0, dims, 1), SC_ERR_INVALID_ARGUMENT,
                "max_rank below the rank");
    check_error(sc_model_input_dim_name(model, 0, 2, &name), SC_ERR_INVALID_ARGUMENT,
                "dim out of range");
    check_error(sc_model_input_type(model, 5, &kind, &dtype, &rank), SC_ERR_INVALID_ARGUMENT,
                "input index out of range");
    run_add(model);  /* [2,3] fits [batch,3] */
    sc_model_free(model);
    build_model(&bytes, "Add");  /* back to the all-static model for the checks below */
  }

  /* Load from a file. */
  if (argc > 1) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/c_api_test_add.onnx", argv[1]);
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
      CHECK(fwrite(bytes.data, 1, bytes.size, f) == bytes.size);
      fclose(f);
      sc_model* from_file = NULL;
      CHECK_OK(sc_model_load(path, &from_file));
      if (from_file != NULL) {
        run_add(from_file);
        sc_model_free(from_file);
      }
      remove(path);
    }
  }

  /* Error paths of loading. */
  sc_model* bad = NULL;
  const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x34};
  check_error(sc_model_load_bytes(garbage, sizeof(garbage), &bad), SC_ERR_INVALID_MODEL,
              "load garbage bytes");
  CHECK(bad == NULL);
  /* A truncated model: the graph's length prefix runs past the end. */
  check_error(sc_model_load_bytes(bytes.data, bytes.size - 5, &bad), SC_ERR_INVALID_MODEL,
              "load truncated bytes");
  CHECK(bad == NULL);
  check_error(sc_model_load("/nonexistent/simplecpp/model.onnx", &bad), SC_ERR_IO,
              "load a missing file");
  CHECK(bad == NULL);
  Buf unknown_op = {{0}, 0};
  build_model(&unknown_op, "NoSuchOpAnywhere");
  check_error(sc_model_load_bytes(unknown_op.data, unknown_op.size, &bad), SC_ERR_UNSUPPORTED,
              "load a model with an unknown op");
  CHECK(bad == NULL);

  /* Error paths of tensors. */
  const int64_t dims[2] = {2, 3};
  const float data[6] = {0};
  sc_tensor* t = NULL;
  check_error(sc_tensor_create(1, dims, 2, data, sizeof(data) - 4, &t), SC_ERR_INVALID_ARGUMENT,
              "tensor with the wrong byte size");
  CHECK(t == NULL);
  const int64_t negative[2] = {2, -3};
  check_error(sc_tensor_create(1, negative, 2, data, sizeof(data), &t), SC_ERR_INVALID_ARGUMENT,
              "tensor with a negative dim");
  CHECK(t == NULL);

  test_limits(&bytes, argc > 1 ? argv[1] : NULL);
  test_builder();

  sc_status_free(NULL); /* freeing NULL is allowed */
  sc_tensor_free(NULL);
  sc_model_free(NULL);
  sc_session_free(NULL);
  sc_builder_free(NULL);
  sc_attributes_free(NULL);
  sc_buffer_free(NULL);

  if (g_failures != 0) {
    fprintf(stderr, "c_api_test: %d of %d checks failed\n", g_failures, g_checks);
    return 1;
  }
  printf("c_api_test: all %d checks passed\n", g_checks);
  return 0;
}
