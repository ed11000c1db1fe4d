// Intra-op threads: a kernels::Parallel whose workers spin briefly between jobs (see
// thread_pool.cc for why). The calling thread takes part in the work, so `threads` = 1 means no
// extra thread at all.
#pragma once

#include <memory>

#include "kernels/parallel.h"

namespace simplecpp::graph {

// threads <= 0 means the number of hardware threads.
std::unique_ptr<kernels::Parallel> MakeThreadPool(int threads);
int DefaultThreadCount();

}  // namespace simplecpp::graph
