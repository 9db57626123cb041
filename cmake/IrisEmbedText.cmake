# iris_embed_text(<output.lua> BASE_DIR <dir> FILES <paths relative to dir...>)
#
# Text files the binary carries (the labs' texts, skeletons and checkers: docs/labs/README.md), beside
# the Lua modules (IrisEmbedLua.cmake) and the device sources (IrisDeviceSources.cmake). Writes a Lua
# module returning { ["relative/path"] = contents, ... }; iris_embed_lua's GENERATED list then compiles
# it into the binary like any module, so `iris-lua lab start` works from an installed binary anywhere.
# A file ending in .lua that does not parse fails the build (cmake/embed_text.lua).
function(iris_embed_text output)
  cmake_parse_arguments(ARG "" "BASE_DIR" "FILES" ${ARGN})
  get_filename_component(output_dir ${output} DIRECTORY)
  file(MAKE_DIRECTORY ${output_dir})
  set(inputs "")
  foreach(rel IN LISTS ARG_FILES)
    list(APPEND inputs ${ARG_BASE_DIR}/${rel})
  endforeach()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${LUAJIT_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/embed_text.lua ${output} ${ARG_BASE_DIR} ${ARG_FILES}
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/cmake/embed_text.lua
    COMMENT "Embedding text files (${output})"
    VERBATIM)
endfunction()
