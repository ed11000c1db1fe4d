# The layering rule as part of the build: `cmake --build` fails when a lower layer includes a
# header of a higher one (cmake/CheckLayering.cmake). The script reads only #include lines, so it
# runs on every build. tests/layering/ holds a tree with one upward include that the
# layering_rejects_upward_include test expects the check to name.
add_custom_target(simplecpp_layering ALL
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/CheckLayering.cmake
  COMMENT "Checking that includes point downward"
  VERBATIM)
if(SIMPLECPP_BUILD_TESTS)
  add_test(NAME layering_rejects_upward_include
           COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}/tests/layering
                   -P ${CMAKE_CURRENT_LIST_DIR}/CheckLayering.cmake)
  set_tests_properties(layering_rejects_upward_include PROPERTIES PASS_REGULAR_EXPRESSION
    "kernels/upward_include\\.cc includes \"graph/ir\\.h\"")
endif()
