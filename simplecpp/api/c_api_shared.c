/* The shared C API library (libsimplecpp_c) has no code of its own: its symbols come from the
 * simplecpp archive linked in whole. CMake needs one source file per library target. */
#include "simplecpp/simplecpp_c.h"
