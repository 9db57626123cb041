# The layers of iris-lua as library targets (docs/architecture.md, "Layers").
#
# iris_layer(<name> [DEPENDS <targets...>] [GLOBS <patterns under src/<name>...>] [EXCLUDE <files...>])
#   adds the OBJECT library iris_<name> from the sources of src/<name> (default pattern: *.cpp) and
#   links it PUBLIC to the layers it builds on. Its include root is a folder of its own that holds a
#   link to src/<name> and nothing else (build/layers/<name>/<name> -> src/<name>): a target sees
#   "heap/symmetric_heap.hpp" only when it links iris_heap, directly or through a layer above it, so
#   an #include that goes up a layer does not compile (tests/layers checks it).
#
# The layers are OBJECT libraries, so every object (every exported iris_* function the Lua side reaches
# through the FFI) ends up in whatever links them all: iris_link_layers(<target>).

function(iris_layer name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;GLOBS;EXCLUDE" ${ARGN})
  set(folder ${PROJECT_SOURCE_DIR}/src/${name})
  set(root ${PROJECT_BINARY_DIR}/layers/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${folder} ${root}/${name} SYMBOLIC)
  if(NOT ARG_GLOBS)
    set(ARG_GLOBS *.cpp)
  endif()
  list(TRANSFORM ARG_GLOBS PREPEND ${folder}/)
  file(GLOB sources CONFIGURE_DEPENDS ${ARG_GLOBS})
  list(TRANSFORM ARG_EXCLUDE PREPEND ${folder}/)
  if(ARG_EXCLUDE)
    list(REMOVE_ITEM sources ${ARG_EXCLUDE})
  endif()
  add_library(iris_${name} OBJECT ${sources})
  target_include_directories(iris_${name} PUBLIC ${root})
  target_link_libraries(iris_${name} PUBLIC ${ARG_DEPENDS})
  target_compile_options(iris_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  set_property(GLOBAL APPEND PROPERTY IRIS_LAYER_TARGETS iris_${name})
endfunction()

# Links every layer into <target> (an executable: iris-lua, the test programs, an embedding program).
function(iris_link_layers target)
  get_property(layers GLOBAL PROPERTY IRIS_LAYER_TARGETS)
  target_link_libraries(${target} PRIVATE ${layers})
  # The Lua side reaches the iris_* functions through ffi.C, i.e. the executable's dynamic symbols.
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
endfunction()
