# rtl_lint: verilator --lint-only -Wall over every RTL source, once per top
# (so that each top's hierarchy is checked without MULTITOP noise).
# --timescale 1ps/1ps as in the build (rtl/CMakeLists.txt): a file without
# `timescale is not a TIMESCALEMOD error when others have one.
# Usage: cmake -DVERILATOR=... -DTOPS="a;b" -DSOURCES="x.sv;y.sv" [-DINCLUDES="dir;..."]
#        [-DPARAM_SETS="top,-GP=1,-GQ=0;..."] -P run_lint.cmake
# PARAM_SETS: a top linted again with each of these parameter overrides.
if(NOT TOPS OR NOT SOURCES)
  message(FATAL_ERROR "run_lint.cmake: TOPS and SOURCES required")
endif()
set(_fail 0)
set(_inc)
foreach(_d IN LISTS INCLUDES)
  list(APPEND _inc -I${_d})
endforeach()
set(_runs ${TOPS})
foreach(_set IN LISTS PARAM_SETS)
  list(APPEND _runs "${_set}")
endforeach()
foreach(_run IN LISTS _runs)
  string(REPLACE "," ";" _args "${_run}")
  list(POP_FRONT _args _top)
  execute_process(
    COMMAND ${VERILATOR} --lint-only -Wall --timescale 1ps/1ps ${_inc} --top-module ${_top} ${_args} ${SOURCES}
    RESULT_VARIABLE _rc)
  if(_rc)
    message(SEND_ERROR "lint failed for top ${_top} ${_args}")
    set(_fail 1)
  else()
    message(STATUS "lint clean: ${_top} ${_args}")
  endif()
endforeach()
if(_fail)
  message(FATAL_ERROR "rtl_lint failed")
endif()
