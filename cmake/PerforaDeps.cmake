# Finds perfora's dependencies the way their packages publish them: llvm-config for LLVM 16,
# CMake's find modules for libpng/libjpeg/MPI, pkg-config for Z3, CUnit and json-c.
find_package(PkgConfig REQUIRED)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(Z3 REQUIRED IMPORTED_TARGET z3)
pkg_check_modules(CUNIT REQUIRED IMPORTED_TARGET cunit)
pkg_check_modules(JSONC REQUIRED IMPORTED_TARGET json-c)

find_program(LLVM_CONFIG NAMES llvm-config-16 llvm-config
             HINTS /usr/lib/llvm-16/bin REQUIRED)
execute_process(COMMAND ${LLVM_CONFIG} --version OUTPUT_VARIABLE LLVM_VERSION
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT LLVM_VERSION MATCHES "^16\\.")
  message(FATAL_ERROR "perfora needs LLVM 16; ${LLVM_CONFIG} reports ${LLVM_VERSION}")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --includedir OUTPUT_VARIABLE LLVM_INCLUDE_DIR
                OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libdir OUTPUT_VARIABLE LLVM_LIB_DIR
                OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libs OUTPUT_VARIABLE LLVM_LIBS
                OUTPUT_STRIP_TRAILING_WHITESPACE)
add_library(pf_llvm INTERFACE)
target_include_directories(pf_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIR})
target_link_directories(pf_llvm INTERFACE ${LLVM_LIB_DIR})
separate_arguments(LLVM_LIBS_LIST UNIX_COMMAND "${LLVM_LIBS}")
target_link_libraries(pf_llvm INTERFACE ${LLVM_LIBS_LIST})
set_property(TARGET pf_llvm APPEND PROPERTY INTERFACE_LINK_OPTIONS "-Wl,-rpath,${LLVM_LIB_DIR}")

find_package(MPI COMPONENTS C)
