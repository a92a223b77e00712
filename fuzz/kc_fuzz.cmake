# kc_fuzz(NAME name SOURCES ... LIBS ... [CORPUS dir])
# One fuzz target: a file defining LLVMFuzzerTestOneInput.
#   - with KC_BUILD_TESTS, under any compiler: fuzz_<name>_replay, the
#     sources plus fuzz/replay_main.cc, a ctest (labels "fuzz;unit") that
#     runs every file of the committed corpus (default fuzz/corpus/<name>),
#     then KC_FUZZ_MUTATIONS deterministic mutants of it (a bounded,
#     non-guided run that every test run does, under gcc too);
#   - under clang: fuzz_<name>, a libFuzzer binary (-fsanitize=fuzzer,
#     address,undefined). scripts/fuzz.sh builds these in a separate
#     build-fuzz/ where the libraries are sanitized and coverage-instrumented
#     too; in a test build under clang each also gets a bounded ctest run
#     (KC_FUZZ_SECONDS, labels "fuzz;unit"; new inputs go to the build tree).
option(KC_BUILD_FUZZ "Build the libFuzzer targets (clang) even without tests" OFF)
set(KC_FUZZ_SECONDS 10 CACHE STRING "Seconds per libFuzzer target in ctest (clang test builds)")
set(KC_FUZZ_MUTATIONS 20000 CACHE STRING "Mutants of the corpus each replay ctest runs")
set(KC_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

function(kc_fuzz)
  cmake_parse_arguments(F "" "NAME;CORPUS" "SOURCES;LIBS" ${ARGN})
  if(NOT F_CORPUS)
    set(F_CORPUS ${KC_FUZZ_DIR}/corpus/${F_NAME})
  endif()
  if(KC_BUILD_TESTS)
    add_executable(fuzz_${F_NAME}_replay ${F_SOURCES} ${KC_FUZZ_DIR}/replay_main.cc)
    target_link_libraries(fuzz_${F_NAME}_replay PRIVATE ${F_LIBS})
    add_test(NAME fuzz_${F_NAME}_replay
             COMMAND fuzz_${F_NAME}_replay --mutations=${KC_FUZZ_MUTATIONS} --seed=1 ${F_CORPUS})
    set_tests_properties(fuzz_${F_NAME}_replay PROPERTIES LABELS "fuzz;unit" TIMEOUT 120)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND (KC_BUILD_TESTS OR KC_BUILD_FUZZ))
    set(flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
    add_executable(fuzz_${F_NAME} ${F_SOURCES})
    target_compile_options(fuzz_${F_NAME} PRIVATE ${flags})
    target_link_options(fuzz_${F_NAME} PRIVATE ${flags})
    target_link_libraries(fuzz_${F_NAME} PRIVATE ${F_LIBS})
    set_property(GLOBAL APPEND PROPERTY KC_FUZZ_CORPORA "fuzz_${F_NAME}=${F_CORPUS}")
    if(KC_BUILD_TESTS)
      set(work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_work/${F_NAME})
      add_test(NAME fuzz_${F_NAME}
        COMMAND sh -c "mkdir -p '${work}' && exec \"$0\" -max_total_time=${KC_FUZZ_SECONDS} \
-max_len=65536 -timeout=10 -rss_limit_mb=2048 '${work}' '${F_CORPUS}'"
          $<TARGET_FILE:fuzz_${F_NAME}>)
      set_tests_properties(fuzz_${F_NAME} PROPERTIES LABELS "fuzz;unit" TIMEOUT 300)
    endif()
  endif()
endfunction()
