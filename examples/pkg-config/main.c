/* A C program built against an installed simplecpp through pkg-config:
 *   cc -std=c11 -c main.c $(pkg-config --cflags simplecpp)
 *   c++ main.o $(pkg-config --libs simplecpp) -o consumer   (a C++ driver brings the C++ runtime)
 * Loads a one-node ONNX model from bytes through the C API, runs it and checks the result.
 * Exits 0 only when the output is the expected one. */
#include <simplecpp/simplecpp_c.h>

#include <stdio.h>

/* ModelProto { ir_version: 8, opset_import { domain: "", version: 17 },
 *   graph { name: "relu", node { input: "x", output: "y", op_type: "Relu" },
 *           input { x: float32 [4] }, output { y: float32 [4] } } } */
static const unsigned char kReluModel[] = {
    0x08, 0x08, 0x3a, 0x36, 0x0a, 0x0c, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x22, 0x04, 0x52, 0x65,
    0x6c, 0x75, 0x12, 0x04, 0x72, 0x65, 0x6c, 0x75, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a,
    0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a,
    0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x11,
};

/* Prints and frees a failed call's status; returns 1 when there was one. */
static int failed(sc_status* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s: %s\n", what, sc_status_message(status));
  sc_status_free(status);
  return 1;
}

int main(void) {
  const float x[4] = {-1.5f, 2.0f, -3.0f, 4.25f};
  const float expected[4] = {0.0f, 2.0f, 0.0f, 4.25f};
  const int64_t dims[1] = {4};
  const char* input_names[1] = {"x"};
  const char* output_names[1] = {"y"};
  sc_model* model = NULL;
  sc_session* session = NULL;
  sc_tensor* input = NULL;
  sc_tensor* output = NULL;
  float y[4] = {0};
  int ok = 0;
  if (!failed(sc_model_load_bytes(kReluModel, sizeof(kReluModel), &model), "load") &&
      !failed(sc_session_create(model, 1, &session), "session") &&
      !failed(sc_tensor_create(1 /* float32 */, dims, 1, x, sizeof(x), &input), "tensor") &&
      !failed(sc_session_run(session, input_names, (const sc_tensor* const*)&input, 1,
                             output_names, 1, &output), "run") &&
      !failed(sc_tensor_copy_data(output, y, sizeof(y)), "copy")) {
    printf("relu(-1.5, 2, -3, 4.25) = (%g, %g, %g, %g)\n", y[0], y[1], y[2], y[3]);
    ok = 1;
    for (int i = 0; i < 4; ++i) ok = ok && y[i] == expected[i];
  }
  sc_tensor_free(output);
  sc_tensor_free(input);
  sc_session_free(session);
  sc_model_free(model);
  return ok ? 0 : 1;
}
