# pf_module(NAME DEPS...): a static library pf_NAME from every .c file in the module's folder
# (an interface library while the folder has none). Globbing keeps module owners from editing
# each other's CMake lists when they add a file.
function(pf_module name)
  file(GLOB srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.c")
  if(srcs)
    add_library(pf_${name} STATIC ${srcs})
    target_link_libraries(pf_${name} PUBLIC ${ARGN})
  else()
    add_library(pf_${name} INTERFACE)
    target_link_libraries(pf_${name} INTERFACE ${ARGN})
  endif()
endfunction()
