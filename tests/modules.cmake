# Test executables of the modules beyond base/ (one line each, in dependency order).
pf_test_module(dataset pf_dataset)
pf_test_module(lang pf_lang)
pf_test_module(apps pf_lang pf_dataset SPLIT apps_median apps_artistic_blur)
pf_test_module(reconstruct pf_reconstruct pf_dataset)
pf_test_module(codegen pf_codegen pf_perforate pf_dataset pf_lang
               SPLIT codegen_approx codegen_apps codegen_exec)
pf_test_module(perforate pf_perforate pf_lang)
pf_test_module(search pf_results pf_cluster pf_search pf_perforate pf_codegen pf_dataset pf_lang)
