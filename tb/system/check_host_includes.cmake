# tb/system: the host driver never includes an ERNIC model header.
#
#   cmake -DROOT=<source root> [-DHOST_DIR=model/host] -P check_host_includes.cmake
#
# design.md: "The driver in host/ reaches the NIC only through timed
# AXI4-Lite transactions and host memory, as a real driver would." Every file
# under ROOT/HOST_DIR is scanned for #include "..." and #include <...>; an
# include of model/ernic/... or model/dma/... fails the check, whether written
# from the source root or relative to the including file (../ernic/x.h), and
# whether direct or through other project headers (the includes of every
# reached file under ROOT are followed). The failure names the chain.
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source root> [-DHOST_DIR=model/host] -P check_host_includes.cmake")
endif()
if(NOT HOST_DIR)
  set(HOST_DIR model/host)
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
if(NOT IS_DIRECTORY "${ROOT}/${HOST_DIR}")
  message(FATAL_ERROR "no directory ${ROOT}/${HOST_DIR}")
endif()

file(GLOB_RECURSE host_files RELATIVE "${ROOT}" "${ROOT}/${HOST_DIR}/*")
if(NOT host_files)
  message(FATAL_ERROR "no files under ${ROOT}/${HOST_DIR}")
endif()
list(SORT host_files)

# Breadth-first over the include graph; chain_<file> = how it was reached.
set(queue ${host_files})
set(seen ${host_files})
foreach(f IN LISTS host_files)
  string(MAKE_C_IDENTIFIER "${f}" id)
  set(chain_${id} "${f}")
endforeach()
set(violations "")
set(scanned 0)
while(queue)
  list(POP_FRONT queue f)
  math(EXPR scanned "${scanned} + 1")
  string(MAKE_C_IDENTIFIER "${f}" id)
  set(chain "${chain_${id}}")
  file(STRINGS "${ROOT}/${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  get_filename_component(fdir "${f}" DIRECTORY)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*$" "\\1" inc "${line}")
    # Candidate paths relative to ROOT: as written (from the source root,
    # the project's convention), and relative to the including file.
    set(cands "${inc}")
    if(fdir)
      get_filename_component(rel "${ROOT}/${fdir}/${inc}" ABSOLUTE)
      file(RELATIVE_PATH rel "${ROOT}" "${rel}")
      list(APPEND cands "${rel}")
    endif()
    foreach(c IN LISTS cands)
      if(c MATCHES "^model/(ernic|dma)/")
        list(APPEND violations "${chain} -> ${c}   (#include ${inc} in ${f})")
      elseif(NOT c MATCHES "^\\.\\." AND EXISTS "${ROOT}/${c}" AND NOT IS_DIRECTORY "${ROOT}/${c}")
        list(FIND seen "${c}" idx)
        if(idx EQUAL -1)
          list(APPEND seen "${c}")
          list(APPEND queue "${c}")
          string(MAKE_C_IDENTIFIER "${c}" cid)
          set(chain_${cid} "${chain} -> ${c}")
        endif()
      endif()
    endforeach()
  endforeach()
endwhile()

list(REMOVE_DUPLICATES violations)
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "the host driver (${HOST_DIR}) includes ERNIC model headers:\n  ${text}")
endif()
message(STATUS "host include check: ${scanned} files reached from ${HOST_DIR}, no model/ernic or model/dma include")
