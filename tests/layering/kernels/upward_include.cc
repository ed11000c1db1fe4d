// Not compiled: the layering check (cmake/CheckLayering.cmake) must reject this tree, because a
// kernel includes a header of the graph layer above it. The ctest layering_rejects_upward_include
// runs the check on this folder and expects the error to name this file and include.
#include "kernels/parallel.h"
#include "graph/ir.h"
