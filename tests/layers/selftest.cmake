# tests/layers/selftest.cmake — the layer check must be able to fail
# (ctest: unit.layers_selftest).
#
#   cmake -DROOT=<source dir> -DWORK=<scratch dir> -P tests/layers/selftest.cmake
#
# Builds a made-up tree in WORK with this project's layers.cmake and three
# deliberate faults — base including a store header, a worker header named
# without its room, and the engine including a worker header — runs
# check.cmake on it and passes only when the check fails and names each.
if(NOT ROOT OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DROOT=<src> -DWORK=<dir> -P selftest.cmake")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/worker/base" "${WORK}/worker/store" "${WORK}/engine")
configure_file("${ROOT}/worker/layers.cmake" "${WORK}/worker/layers.cmake" COPYONLY)
file(WRITE "${WORK}/worker/store/store.h" "#include \"base/log.h\"\n")
file(WRITE "${WORK}/worker/base/log.h" "/* nothing */\n")
file(WRITE "${WORK}/worker/base/log.c"
  "#include \"base/log.h\"\n#include \"store/store.h\"\n#include \"log.h\"\n")
file(WRITE "${WORK}/engine/rule.c" "#include \"base/log.h\"\n")
execute_process(
  COMMAND ${CMAKE_COMMAND} -DROOT=${WORK} -P ${ROOT}/tests/layers/check.cmake
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
set(want
  "worker/base/log.c: file in room 'base' includes store/store.h of room 'store', a higher layer"
  "rooms 'base' and 'store' include each other"
  "worker/base/log.c: includes \"log.h\" without its room"
  "engine/rule.c: the engine includes a worker header")
set(missing "")
foreach(w IN LISTS want)
  string(FIND "${out}" "${w}" at)
  if(at EQUAL -1)
    list(APPEND missing "${w}")
  endif()
endforeach()
if(rc EQUAL 0 OR missing)
  message("${out}")
  message(FATAL_ERROR "layers selftest: the check passed a tree it must refuse (exit ${rc}); not reported: ${missing}")
endif()
file(REMOVE_RECURSE "${WORK}")
message("layers selftest: ok, the check refused the made-up violations")
