# tests/layers/check.cmake — the layer check of worker/ (ctest: unit.layers).
#
#   cmake -DROOT=<source dir> -P tests/layers/check.cmake
#
# Reads the declared order of rooms from ROOT/worker/layers.cmake and fails
# (exit 1, one line per problem) when
#   - a file in worker/<room>/ includes a header of a room declared after
#     its own (an upward include), or two rooms include each other;
#   - a file includes a worker header without its room ("log.h" instead of
#     "base/log.h") or names a header that does not exist;
#   - worker/ holds a source file outside the rooms, or a folder that
#     layers.cmake does not declare;
#   - engine/ includes any worker header (the engine is below every room);
#   - a unit test in tests/unit/<room>/ includes a header above its room
#     (tests/unit/engine/ may include engine headers only).
# ROOT may also point at a made-up tree: tests/layers/selftest.cmake runs
# the check on one with a deliberate violation and expects it to fail.
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -P check.cmake")
endif()
include(${ROOT}/worker/layers.cmake)

set(problems "")
set(edges "")

# layer_of(<room> <out>): the room's index in GB_LAYERS, -1 for engine, or
# "" when the name is no room.
function(layer_of room out)
  if(room STREQUAL "engine")
    set(${out} -1 PARENT_SCOPE)
    return()
  endif()
  list(FIND GB_LAYERS "${room}" i)
  if(i EQUAL -1)
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} ${i} PARENT_SCOPE)
  endif()
endfunction()

# check_file(<file> <room> <what>): every quoted include of <file>, which
# lives in <room> (engine, a worker room, or a test's room).
macro(check_file file room what)
  file(STRINGS "${file}" incs REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  file(RELATIVE_PATH rel "${ROOT}" "${file}")
  layer_of("${room}" mine)
  foreach(line IN LISTS incs)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    if(inc MATCHES "^([a-z_]+)/[^/]+\\.h$")
      set(to "${CMAKE_MATCH_1}")
      layer_of("${to}" theirs)
      if(theirs STREQUAL "")
        continue() # not a room: a test helper folder, a system path
      endif()
      if(NOT EXISTS "${ROOT}/worker/${inc}")
        list(APPEND problems "${rel}: includes ${inc}, which does not exist")
      elseif(theirs GREATER mine)
        list(APPEND problems
          "${rel}: ${what} in room '${room}' includes ${inc} of room '${to}', a higher layer")
      endif()
      if(NOT to STREQUAL room AND NOT room STREQUAL "engine")
        list(APPEND edges "${room}>${to}")
      endif()
    elseif(NOT inc MATCHES "/")
      if(EXISTS "${ROOT}/engine/${inc}")
        continue() # an engine header
      endif()
      file(GLOB hit "${ROOT}/worker/*/${inc}")
      if(hit)
        list(APPEND problems
          "${rel}: includes \"${inc}\" without its room (write \"<room>/${inc}\")")
      endif()
    endif()
  endforeach()
endmacro()

# worker/: every file in a declared room, none loose.
file(GLOB loose LIST_DIRECTORIES false "${ROOT}/worker/*.c" "${ROOT}/worker/*.h")
foreach(f IN LISTS loose)
  file(RELATIVE_PATH rel "${ROOT}" "${f}")
  list(APPEND problems "${rel}: a source file outside the rooms of worker/")
endforeach()
file(GLOB dirs LIST_DIRECTORIES true "${ROOT}/worker/*")
foreach(d IN LISTS dirs)
  if(IS_DIRECTORY "${d}")
    get_filename_component(room "${d}" NAME)
    layer_of("${room}" i)
    if(i STREQUAL "")
      list(APPEND problems "worker/${room}/: a folder worker/layers.cmake does not declare")
      continue()
    endif()
    file(GLOB_RECURSE srcs "${d}/*.c" "${d}/*.h")
    foreach(f IN LISTS srcs)
      check_file("${f}" "${room}" "file")
    endforeach()
  endif()
endforeach()

# engine/: below every room.
file(GLOB srcs "${ROOT}/engine/*.c" "${ROOT}/engine/*.h")
foreach(f IN LISTS srcs)
  file(STRINGS "${f}" incs REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
  file(RELATIVE_PATH rel "${ROOT}" "${f}")
  foreach(line IN LISTS incs)
    list(APPEND problems "${rel}: the engine includes a worker header (${line})")
  endforeach()
endforeach()

# tests/unit/<room>/: a test sees its room and those below.
file(GLOB dirs LIST_DIRECTORIES true "${ROOT}/tests/unit/*")
foreach(d IN LISTS dirs)
  if(IS_DIRECTORY "${d}")
    get_filename_component(room "${d}" NAME)
    layer_of("${room}" i)
    if(i STREQUAL "")
      list(APPEND problems "tests/unit/${room}/: no room of that name")
      continue()
    endif()
    file(GLOB srcs "${d}/*.c")
    foreach(f IN LISTS srcs)
      check_file("${f}" "${room}" "test")
    endforeach()
  endif()
endforeach()

# Two rooms that include each other (impossible while the order holds, but
# said on its own so the message names the pair).
list(REMOVE_DUPLICATES edges)
foreach(e IN LISTS edges)
  string(REPLACE ">" ";" ab "${e}")
  list(GET ab 0 a)
  list(GET ab 1 b)
  list(FIND edges "${b}>${a}" back)
  if(NOT back EQUAL -1 AND a STRLESS b)
    list(APPEND problems "rooms '${a}' and '${b}' include each other")
  endif()
endforeach()

list(LENGTH problems n)
if(n GREATER 0)
  foreach(p IN LISTS problems)
    message("layers: ${p}")
  endforeach()
  message(FATAL_ERROR "layers: ${n} problem(s); the order is worker/layers.cmake's: ${GB_LAYERS}")
endif()
list(LENGTH GB_LAYERS nrooms)
message("layers: ok (${nrooms} rooms: ${GB_LAYERS})")
