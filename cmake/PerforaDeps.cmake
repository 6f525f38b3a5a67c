# Finds perfora's dependencies the way their packages publish them: llvm-config for LLVM 16,
# CMake's find modules for libpng/libjpeg, pkg-config for Z3, CUnit, json-c and MPI.
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
# Static by default: loading libLLVM-16.so costs ~50 MB of RSS in every process (relocating its
# tables, running every static initialiser), where the static libraries bring in only what the
# LLVM-C calls of codegen/ reach. The components: the C API's Core and Analysis (verifier), the
# new pass manager (Passes), ORC LLJIT (OrcJIT), and the host target (native: its code generator;
# its disassembler and assembly parser are listed but never pulled in).
option(PF_LLVM_STATIC "Link LLVM's static component libraries (OFF: libLLVM-16.so)" ON)
# NVPTX, the bitcode reader and the linker: the CUDA backend's PTX (codegen/gpu_ptx.c, with
# CUDA's libdevice linked in for the math functions).
set(PF_LLVM_COMPONENTS core analysis passes orcjit native nvptx bitreader linker)
add_library(pf_llvm INTERFACE)
target_include_directories(pf_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIR})
if(PF_LLVM_STATIC)
  execute_process(COMMAND ${LLVM_CONFIG} --link-static --libfiles ${PF_LLVM_COMPONENTS}
                  OUTPUT_VARIABLE LLVM_LIBS OUTPUT_STRIP_TRAILING_WHITESPACE
                  COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${LLVM_CONFIG} --link-static --system-libs ${PF_LLVM_COMPONENTS}
                  OUTPUT_VARIABLE LLVM_SYSTEM_LIBS OUTPUT_STRIP_TRAILING_WHITESPACE
                  COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(LLVM_LIBS_LIST UNIX_COMMAND "${LLVM_LIBS}")
  separate_arguments(LLVM_SYSTEM_LIBS_LIST UNIX_COMMAND "${LLVM_SYSTEM_LIBS}")
  # LLVM is C++: the C executables that link it need libstdc++ (after the archives). The system
  # libraries are linked as needed, so the ones no pulled-in object uses are not loaded.
  target_link_libraries(pf_llvm INTERFACE ${LLVM_LIBS_LIST} -Wl,--push-state,--as-needed
                        ${LLVM_SYSTEM_LIBS_LIST} stdc++ -Wl,--pop-state)
  # --gc-sections drops the unreferenced functions and data of the archives' objects (LLVM builds
  # them with -ffunction-sections). --exclude-libs keeps the archives' symbols out of the dynamic
  # symbol table: a shared library with its own LLVM (Halide's libLLVM-14.so in bench/) would
  # otherwise bind to our copies and register every command-line option twice.
  target_link_options(pf_llvm INTERFACE -Wl,--gc-sections -Wl,--exclude-libs,ALL)
  # LLVM's tables bring ~100k relative relocations: packed (DT_RELR, glibc 2.36), the loader
  # reads a few KB instead of 2.5 MB.
  include(CheckLinkerFlag)
  check_linker_flag(C -Wl,-z,pack-relative-relocs PF_HAVE_RELR)
  if(PF_HAVE_RELR)
    target_link_options(pf_llvm INTERFACE -Wl,-z,pack-relative-relocs)
  endif()
else()
  execute_process(COMMAND ${LLVM_CONFIG} --libs OUTPUT_VARIABLE LLVM_LIBS
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  separate_arguments(LLVM_LIBS_LIST UNIX_COMMAND "${LLVM_LIBS}")
  target_link_directories(pf_llvm INTERFACE ${LLVM_LIB_DIR})
  target_link_libraries(pf_llvm INTERFACE ${LLVM_LIBS_LIST})
  set_property(TARGET pf_llvm APPEND PROPERTY INTERFACE_LINK_OPTIONS "-Wl,-rpath,${LLVM_LIB_DIR}")
endif()

# MPI for `mpirun perfora tune` (cluster/mpi.h): Open MPI by default; PF_MPI=mpich builds
# against MPICH instead (Debian's libmpich-dev: its pkg-config module, since the two cannot
# both be the default mpicc); off builds without MPI. The launcher the tests use goes with it.
set(PF_MPI "openmpi" CACHE STRING "MPI to build with: openmpi, mpich or off")
set_property(CACHE PF_MPI PROPERTY STRINGS openmpi mpich off)
add_library(pf_mpi INTERFACE)
if(PF_MPI STREQUAL "openmpi")
  pkg_check_modules(OMPI REQUIRED IMPORTED_TARGET ompi-c)
  target_link_libraries(pf_mpi INTERFACE PkgConfig::OMPI)
  find_program(PF_MPIEXEC NAMES mpirun.openmpi mpirun)
elseif(PF_MPI STREQUAL "mpich")
  pkg_check_modules(MPICH REQUIRED IMPORTED_TARGET mpich)
  target_link_libraries(pf_mpi INTERFACE PkgConfig::MPICH)
  find_program(PF_MPIEXEC NAMES mpirun.mpich mpiexec.mpich mpiexec.hydra)
elseif(NOT PF_MPI STREQUAL "off")
  message(FATAL_ERROR "PF_MPI is openmpi, mpich or off, not '${PF_MPI}'")
endif()
