# The libFuzzer target tests/fuzz/datum_decode_fuzzer.cc, compiled by clang++ whatever the
# project's compiler, with the data sources it exercises instrumented alongside it, and a
# CTest test that runs it for a bounded time. CROSSBOW_FUZZ: ON, OFF or AUTO (on when clang++
# links -fsanitize=fuzzer here).
set(CROSSBOW_FUZZ AUTO CACHE STRING "Build the libFuzzer target with clang++ (ON, OFF, AUTO)")
set(CROSSBOW_FUZZ_SECONDS 15 CACHE STRING "How long the fuzz test runs")

find_program(CROSSBOW_CLANGXX NAMES clang++ clang++-14)
set(fuzz_found OFF)
if(CROSSBOW_CLANGXX AND TARGET crossbow_data)
  set(probe ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe.cc)
  file(WRITE ${probe}
    "#include <cstddef>\n#include <cstdint>\n"
    "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n")
  execute_process(COMMAND ${CROSSBOW_CLANGXX} -fsanitize=fuzzer ${probe} -o ${probe}.out
                  RESULT_VARIABLE probe_result OUTPUT_QUIET ERROR_QUIET)
  if(probe_result EQUAL 0)
    set(fuzz_found ON)
  endif()
endif()
crossbow_resolve_option(CROSSBOW_FUZZ ${fuzz_found})
message(STATUS "Crossbow: FUZZ=${CROSSBOW_FUZZ}")

if(CROSSBOW_FUZZ)
  set(fuzzer ${CMAKE_CURRENT_BINARY_DIR}/datum_decode_fuzzer)
  # The fuzzer loads the build's libcrossbow_codecs.so beside it (data/image_codecs.h).
  set(fuzz_sources tests/fuzz/datum_decode_fuzzer.cc data/datum.cc data/image_decode.cc
      data/image_codecs.cc data/jpeg_region.cc data/transforms.cc data/bilinear_resize.cc)
  get_target_property(opencv_includes opencv_core INTERFACE_INCLUDE_DIRECTORIES)
  add_custom_command(
    OUTPUT ${fuzzer}
    COMMAND ${CROSSBOW_CLANGXX} -std=c++17 -g -O1 -fsanitize=fuzzer,address
            -I${CMAKE_CURRENT_SOURCE_DIR} -I${opencv_includes} ${fuzz_sources}
            $<TARGET_FILE:crossbow>
            $<TARGET_FILE:opencv_core> $<TARGET_FILE:opencv_imgproc> ${JPEG_LIBRARIES} -ldl
            -Wl,-rpath,${CMAKE_CURRENT_BINARY_DIR} -o ${fuzzer}
    DEPENDS ${fuzz_sources} crossbow crossbow_codecs
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    COMMENT "Building the libFuzzer target datum_decode_fuzzer with clang++")
  add_custom_target(datum_decode_fuzzer ALL DEPENDS ${fuzzer})
  if(CROSSBOW_BUILD_TESTS)
    # Leaks inside OpenCV's codecs are not ours; the pixel limit keeps a header that claims a
    # huge image from exhausting the fuzzer's memory. A fixed seed and run count make the test
    # repeatable (the time limit only caps a slow machine); longer runs with other seeds are
    # for hunting: build/datum_decode_fuzzer -max_total_time=600.
    add_test(NAME datum_decode_fuzzer
             COMMAND ${fuzzer} -seed=1 -runs=2000000 -max_total_time=${CROSSBOW_FUZZ_SECONDS}
                     -rss_limit_mb=2048 -max_len=4096)
    # Inputs that once crashed it, replayed every run (libFuzzer runs files given by name once).
    file(GLOB fuzz_regressions CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz/regressions/*)
    add_test(NAME datum_decode_fuzzer_regressions COMMAND ${fuzzer} ${fuzz_regressions})
    set_tests_properties(datum_decode_fuzzer datum_decode_fuzzer_regressions PROPERTIES
      ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0;OPENCV_IO_MAX_IMAGE_PIXELS=4194304")
  endif()
endif()
