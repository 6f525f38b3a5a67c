# Test executables of the modules beyond base/ (one line each, in dependency order).
pf_test_module(dataset pf_dataset)
pf_test_module(lang pf_lang)
pf_test_module(apps pf_interp pf_lang pf_dataset SPLIT apps_median apps_artistic_blur)
pf_test_module(reconstruct pf_reconstruct pf_dataset)
pf_test_module(interp pf_interp pf_reconstruct pf_perforate pf_lang pf_dataset)
# The interpreter against a fake stage runtime linked in place of the real one (a link seam:
# tests/interp_seam/fake_stage_rt.c defines reconstruct/stage_rt.h's functions).
pf_test_module(interp_seam pf_interp pf_perforate pf_lang)
pf_test_module(codegen pf_codegen pf_perforate pf_dataset pf_lang
               SPLIT codegen_approx codegen_apps codegen_exec codegen_gpu_lower)
# The thread pool's suite once more, built with ThreadSanitizer together with the pool's own
# source (not in the ASan build: the two sanitizers do not mix).
if(NOT PF_SANITIZE)
  add_executable(test_pool_tsan codegen/test_pool.c harness/harness.c
                 ${PROJECT_SOURCE_DIR}/codegen/runtime_pool.c)
  target_include_directories(test_pool_tsan PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(test_pool_tsan PRIVATE -fsanitize=thread)
  target_link_options(test_pool_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_pool_tsan PRIVATE PkgConfig::CUNIT Threads::Threads)
  add_test(NAME pool_tsan COMMAND test_pool_tsan codegen_pool)
  set_tests_properties(pool_tsan PROPERTIES LABELS codegen TIMEOUT 600)
endif()
pf_test_module(perforate pf_perforate pf_lang)
pf_test_module(run pf_run pf_codegen pf_perforate pf_dataset pf_lang)
pf_test_module(search pf_results pf_cluster pf_search pf_perforate pf_codegen pf_dataset pf_lang)
# The report's suites parse its pages with libxml2 (Debian's libxml2-dev).
pkg_check_modules(LIBXML2 REQUIRED IMPORTED_TARGET libxml-2.0)
pf_test_module(results pf_results pf_cluster pf_search pf_perforate pf_codegen pf_dataset pf_lang
               PkgConfig::LIBXML2 SPLIT results_real results_export_cuda)
# A stand-in CUDA driver (tests/export/fake_cuda.c) that the exported CUDA libraries of
# results_export_cuda load instead of libcuda.so.1; built without sanitizers, as the clients
# that load it are.
add_library(fake_cuda SHARED export/fake_cuda.c)
target_compile_options(fake_cuda PRIVATE -fno-sanitize=all)
target_link_options(fake_cuda PRIVATE -fno-sanitize=all)
target_compile_definitions(test_results PRIVATE PF_FAKE_CUDA="$<TARGET_FILE:fake_cuda>")
add_dependencies(test_results fake_cuda)
if(PF_SANITIZE)  # the exported libraries' clients too
  target_compile_definitions(test_results PRIVATE
    PF_CLIENT_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined")
endif()
# The search over MPI, end to end: mpirun (the launcher of PF_MPI) runs the perfora binary.
pf_test_module(cluster pf_results pf_cluster pf_search pf_perforate pf_codegen pf_dataset pf_lang)
target_compile_definitions(test_cluster PRIVATE PF_PERFORA_EXE="$<TARGET_FILE:perfora>"
                           PF_MPIEXEC="${PF_MPIEXEC}" PF_MPI_FLAVOR="${PF_MPI}"
                           PF_FAKE_CUDA="$<TARGET_FILE:fake_cuda>")
add_dependencies(test_cluster perfora fake_cuda)
set_tests_properties(cluster PROPERTIES LABELS "cluster;mpi")
# Exported libraries (tests/export/): perfora export, then CMake and make builds of each library,
# a plain C client linked against them and compared with the JIT's output (export_ref).
add_executable(export_ref export/export_ref.c)
target_link_libraries(export_ref PRIVATE pf_run pf_codegen pf_perforate pf_dataset pf_lang)
foreach(part paper apps cuda)
  add_test(NAME export_build_${part}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/export/test_export_build.sh $<TARGET_FILE:perfora>
                   $<TARGET_FILE:export_ref> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/export-work-${part} ${part})
  set_tests_properties(export_build_${part} PROPERTIES LABELS results TIMEOUT 900)
endforeach()
