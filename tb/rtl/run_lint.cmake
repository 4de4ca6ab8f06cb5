# rtl_lint: verilator --lint-only -Wall over every RTL source, once per top
# (so that each top's hierarchy is checked without MULTITOP noise).
# --timescale 1ps/1ps as in the build (rtl/CMakeLists.txt): a file without
# `timescale is not a TIMESCALEMOD error when others have one.
# Usage: cmake -DVERILATOR=... -DTOPS="a;b" -DSOURCES="x.sv;y.sv" [-DINCLUDES="dir;..."] -P run_lint.cmake
if(NOT TOPS OR NOT SOURCES)
  message(FATAL_ERROR "run_lint.cmake: TOPS and SOURCES required")
endif()
set(_fail 0)
set(_inc)
foreach(_d IN LISTS INCLUDES)
  list(APPEND _inc -I${_d})
endforeach()
foreach(_top IN LISTS TOPS)
  execute_process(
    COMMAND ${VERILATOR} --lint-only -Wall --timescale 1ps/1ps ${_inc} --top-module ${_top} ${SOURCES}
    RESULT_VARIABLE _rc)
  if(_rc)
    message(SEND_ERROR "lint failed for top ${_top}")
    set(_fail 1)
  else()
    message(STATUS "lint clean: ${_top}")
  endif()
endforeach()
if(_fail)
  message(FATAL_ERROR "rtl_lint failed")
endif()
