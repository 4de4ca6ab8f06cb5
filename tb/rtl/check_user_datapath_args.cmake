# ctest rtl.user_datapath_cmake_errors: ernic_user_datapath()'s argument
# errors (cmake/ErnicUserDatapath.cmake). Each case calls the function in
# its own `cmake -P` and must fail (non-zero exit) with a FATAL_ERROR naming
# the argument.
# Usage: cmake -DMODULE=cmake/ErnicUserDatapath.cmake -DSV=<an existing .sv>
#              -DWORK=<scratch dir> -P check_user_datapath_args.cmake
if(NOT MODULE OR NOT SV OR NOT WORK)
  message(FATAL_ERROR "check_user_datapath_args.cmake: MODULE, SV and WORK required")
endif()
file(MAKE_DIRECTORY ${WORK})

string(REPEAT "n" 65 _long)
# case name | call arguments | expected text (regex)
set(_cases
  "bad_seam|NAME x SEAM bogus TOP t SOURCES ${SV}|SEAM 'bogus' is not rx or tx"
  "no_seam|NAME x TOP t SOURCES ${SV}|SEAM is missing"
  "no_top|NAME x SEAM rx SOURCES ${SV}|TOP is missing"
  "no_name|SEAM rx TOP t SOURCES ${SV}|NAME is missing"
  "no_sources|NAME x SEAM tx TOP t|SOURCES is missing"
  "bad_name|NAME a-b SEAM rx TOP t SOURCES ${SV}|NAME 'a-b' must be letters, digits and '_'"
  "bad_top|NAME x SEAM rx TOP 9t SOURCES ${SV}|TOP '9t' is not a Verilog module name"
  "long_name|NAME ${_long} SEAM rx TOP t SOURCES ${SV}|NAME '${_long}' is 65 characters, at most 64"
  "unknown_arg|FOO NAME x SEAM rx TOP t SOURCES ${SV}|unknown argument\\(s\\) 'FOO'"
  "missing_file|NAME x SEAM rx TOP t SOURCES no_such_file.sv|SOURCES: no file .*no_such_file.sv"
  "duplicate|NAME dup SEAM rx TOP t SOURCES ${SV}|NAME 'dup' is already a datapath \\(user:dup\\)"
  # Valid arguments get past the checks; outside rtl/ (here: no ernic_rtl) it stops.
  "outside_rtl|NAME x SEAM rx TOP t SOURCES ${SV}|call it from rtl/CMakeLists.txt")
set(_fail 0)
foreach(_c IN LISTS _cases)
  string(REPLACE "|" ";" _parts "${_c}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _args)
  list(GET _parts 2 _want)
  set(_script ${WORK}/${_name}.cmake)
  set(_pre "")
  if(_name STREQUAL "duplicate")
    set(_pre "set_property(GLOBAL APPEND PROPERTY ERNIC_USER_DATAPATHS dup)\n")
  endif()
  file(WRITE ${_script} "include(${MODULE})\n${_pre}ernic_user_datapath(${_args})\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -P ${_script}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REGEX REPLACE "[ \n]+" " " _flat "${_out}")
  if(_rc EQUAL 0)
    message(SEND_ERROR "${_name}: exit 0, a FATAL_ERROR wanted")
    set(_fail 1)
  elseif(NOT _flat MATCHES "ernic_user_datapath: ${_want}")
    message(SEND_ERROR "${_name}: expected 'ernic_user_datapath: ${_want}' in:\n${_out}")
    set(_fail 1)
  else()
    message(STATUS "${_name}: ok")
  endif()
endforeach()
# ERNIC_USER_RTL entries (ernic_user_rtl_check): relative, missing, a folder.
foreach(_c "rel|u.cmake|ERNIC_USER_RTL: 'u.cmake' is a relative path; give an absolute one"
           "missing|${WORK}/no_such.cmake|ERNIC_USER_RTL: no file .*no_such.cmake"
           "folder|${WORK}|ERNIC_USER_RTL: no file ")
  string(REPLACE "|" ";" _parts "${_c}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _arg)
  list(GET _parts 2 _want)
  set(_script ${WORK}/user_rtl_${_name}.cmake)
  file(WRITE ${_script} "include(${MODULE})\nernic_user_rtl_check(\"${_arg}\")\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -P ${_script} WORKING_DIRECTORY ${WORK}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REGEX REPLACE "[ \n]+" " " _flat "${_out}")
  if(_rc EQUAL 0 OR NOT _flat MATCHES "${_want}")
    message(SEND_ERROR "user_rtl_${_name}: exit ${_rc}, expected '${_want}' in:\n${_out}")
    set(_fail 1)
  else()
    message(STATUS "user_rtl_${_name}: ok")
  endif()
endforeach()
file(WRITE ${WORK}/u.cmake "# an ERNIC_USER_RTL file\n")
file(WRITE ${WORK}/user_rtl_ok.cmake "include(${MODULE})\nernic_user_rtl_check(\"${WORK}/u.cmake\")\n")
execute_process(COMMAND ${CMAKE_COMMAND} -P ${WORK}/user_rtl_ok.cmake RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
  ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(SEND_ERROR "user_rtl_ok: an absolute path to a file refused:\n${_out}")
  set(_fail 1)
endif()
if(_fail)
  message(FATAL_ERROR "ernic_user_datapath argument checks failed")
endif()
