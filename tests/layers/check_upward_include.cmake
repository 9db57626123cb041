# cmake -DBUILD_DIR=<build> -DTARGET=<check target> -DLAYER=<layer> -DHEADER=<header> -DOWNER=<its layer>
#       -P check_upward_include.cmake
# Builds <TARGET>_control (the source in layer OWNER: must compile), then <TARGET> (the same source in
# LAYER: must fail because HEADER is not found). See tests/layers/CMakeLists.txt.
if(NOT EXISTS ${BUILD_DIR}/CMakeFiles)
  message("skipped: ${BUILD_DIR} was carried without its build system (tests/gpu/pack_build.sh), so nothing can be built here")
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}_control
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "#include \"${HEADER}\" does not compile even in layer ${OWNER}, so this check proves nothing:\n${output}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(status EQUAL 0)
  message(FATAL_ERROR "layer ${LAYER} compiled #include \"${HEADER}\" of the higher layer ${OWNER}: the layer rule is not enforced")
endif()
string(REPLACE "." "\\." pattern "${HEADER}")
if(NOT output MATCHES "${pattern}: No such file or directory|'${pattern}' file not found")
  message(FATAL_ERROR "the build of layer ${LAYER}'s #include \"${HEADER}\" failed, but not because the header is out of reach:\n${output}")
endif()
message("layer ${LAYER} cannot include ${HEADER} (layer ${OWNER}), which layer ${OWNER} itself can")
