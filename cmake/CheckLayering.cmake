# Checks that every quoted #include of a layer names a header of that layer or of a layer below it:
#   core -> quant -> kernels -> graph -> simplecpp (each may include those to its left)
# plus the public vocabulary (simplecpp/{dtype,tensor,error,value}.h, implemented in core/).
# Links alone do not catch an upward include of a header-only piece (an inline function, a struct),
# so the build runs this script (cmake/Layering.cmake) and fails on the first upward include.
#   cmake -DROOT=DIR -P cmake/CheckLayering.cmake
# The test tree of a lower layer follows its layer's rule (plus tests/reference/, scalar references).
cmake_minimum_required(VERSION 3.22)
if(NOT ROOT)
  message(FATAL_ERROR "CheckLayering.cmake: pass -DROOT=<source tree>")
endif()

set(vocabulary "simplecpp/(dtype|tensor|error|value)\\.h")
set(core_allowed "core/|${vocabulary}")
set(quant_allowed "${core_allowed}|quant/")
set(kernels_allowed "${quant_allowed}|kernels/")
set(graph_allowed "${kernels_allowed}|graph/")

set(violations "")
set(checked 0)
# check_layer(DIR ALLOWED_REGEX [EXCEPT file...]): every quoted include of the sources under
# ROOT/DIR must start with one of ALLOWED_REGEX's alternatives.
function(check_layer dir allowed)
  cmake_parse_arguments(arg "" "" "EXCEPT" ${ARGN})
  if(NOT IS_DIRECTORY "${ROOT}/${dir}")
    return()
  endif()
  file(GLOB_RECURSE files "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cc")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    if(rel IN_LIST arg_EXCEPT)
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*$" "\\1" header "${line}")
      if(NOT header MATCHES "^(${allowed})")
        list(APPEND violations "${rel} includes \"${header}\" (layer ${dir} may include: ${allowed})")
      endif()
    endforeach()
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
  set(checked "${checked}" PARENT_SCOPE)
endfunction()

check_layer(core "${core_allowed}")
check_layer(quant "${quant_allowed}")
check_layer(kernels "${kernels_allowed}")
check_layer(graph "${graph_allowed}")
check_layer(tests/core "${core_allowed}|reference/")
check_layer(tests/quant "${quant_allowed}|reference/")
# reduce_test.cc runs the reductions on graph's thread pool, so it builds into simplecpp_tests
# (tests/CMakeLists.txt), not into the kernels-only test executable.
check_layer(tests/kernels "${kernels_allowed}|reference/" EXCEPT tests/kernels/nn/reduce_test.cc)

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "upward include (links point downward only: docs/ARCHITECTURE.md):\n  ${text}")
endif()
message(STATUS "layering: ${checked} files of core, quant, kernels and graph (and their tests) include only their own and lower layers")
