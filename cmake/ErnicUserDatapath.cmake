# Users' own RTL in place of a datapath block (rtl/SEAM.md "Users' own RTL").
#
#   ernic_user_datapath(NAME <name> SEAM rx|tx TOP <module> SOURCES <file>...
#                       [VERILATOR_ARGS <arg>...])
#
# Verilates rtl/datapath/roce_datapath.sv (the one top per node: roce_tx ->
# async FIFO -> CMAC, CMAC -> async FIFO -> roce_rx) with <module> in place
# of roce_rx (SEAM rx: -DROCE_RX_MODULE=<module>) or of roce_tx (SEAM tx:
# -DROCE_TX_MODULE=<module>), plus the user's SOURCES, into the Verilated
# model Vroce_datapath_<name> (in ernic_rtl), and registers it as the
# datapath "user:<name>": scenarios pick it with `datapath: user:<name>`,
# the command line with `ernic-sim run|regress --datapath user:<name>`.
#
#   NAME            letters, digits, '_' (a C++ identifier part), at most 64
#                   characters; unique
#   SEAM            rx or tx: the block replaced; its in-tree source is left
#                   out, so the user's module may even be called roce_rx
#   TOP             the user's module, with the seam's ports (rtl/SEAM.md)
#   SOURCES         the user's files (relative paths: to the calling
#                   CMakeLists' folder); rtl/icrc/icrc.sv, the CDC FIFO and
#                   the other direction's block are always there (a file
#                   given twice is taken once); `include "seam.vh" works
#                   (rtl/include is on the include path)
#   VERILATOR_ARGS  more Verilator arguments (defines, -G parameters, ...)
#
# The seam's ports are checked at Verilation: a port missing from TOP is
# Verilator's error; a port of another width (WIDTH) or one the seam does not
# have (PINMISSING) is made an error too (ERNIC_USER_DATAPATH_CHECK_ARGS),
# where the rest of the RTL build only warns (-Wno-fatal). WIDTH is then an
# error anywhere in the user's block: lint_off WIDTH around code of its own
# that needs it (VERILATOR_ARGS -Wno-WIDTH would also stop the port check).
#
# Call it from rtl/CMakeLists.txt or a file that rtl/CMakeLists.txt includes:
# the cache variable ERNIC_USER_RTL lists CMake files it includes, so a
# block outside the tree needs no edit of the repo:
#
#   cmake -S . -B build -DERNIC_USER_RTL=/path/to/my_rx.cmake
#   # my_rx.cmake: ernic_user_datapath(NAME mine SEAM rx TOP my_rx SOURCES my_rx.sv)
#
# How it registers (no static-initialisation order, no whole-archive):
# each call writes <build>/user_datapaths/user_datapath_<name>.cpp from
# cmake/user_datapath.cpp.in (make_user_datapath_<name>: an RtlDatapath on
# bind_roce_datapath<Vroce_datapath_<name>>); model/CMakeLists.txt calls
# ernic_user_datapath_sources(), which writes user_datapaths.cpp, the
# function user_datapath_factories() listing every call, and compiles them
# all into ernic_model, whose datapath registry (datapath.cpp) calls it.
#
# Errors (FATAL_ERROR, naming the argument): a missing or empty NAME, SEAM,
# TOP or SOURCES; a NAME or TOP that is not an identifier; a NAME longer
# than 64 characters; SEAM other than
# rx / tx; a NAME used twice; a source file that does not exist; an
# unknown argument; a call from another folder than rtl/.

set(ERNIC_USER_DATAPATH_TEMPLATE ${CMAKE_CURRENT_LIST_DIR}/user_datapath.cpp.in)
# A seam port of the wrong width, or one the seam does not have, stops the
# build (tb/rtl/check_user_datapath_ports.cmake checks both).
set(ERNIC_USER_DATAPATH_CHECK_ARGS -Werror-WIDTH -Werror-PINMISSING)

function(ernic_user_datapath)
  set(_f "ernic_user_datapath")
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;SEAM;TOP" "SOURCES;VERILATOR_ARGS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${_f}: unknown argument(s) '${ARG_UNPARSED_ARGUMENTS}' "
                        "(arguments: NAME, SEAM, TOP, SOURCES, VERILATOR_ARGS)")
  endif()
  foreach(_k NAME SEAM TOP SOURCES)
    if(NOT ARG_${_k})
      message(FATAL_ERROR "${_f}: ${_k} is missing (usage: ${_f}(NAME <name> SEAM rx|tx TOP <module> "
                          "SOURCES <file>... [VERILATOR_ARGS <arg>...]))")
    endif()
  endforeach()
  if(NOT ARG_NAME MATCHES "^[A-Za-z0-9_]+$")
    message(FATAL_ERROR "${_f}: NAME '${ARG_NAME}' must be letters, digits and '_' (the datapath is user:<NAME>)")
  endif()
  string(LENGTH "${ARG_NAME}" _len)
  if(_len GREATER 64)
    # Verilator's file names are Vroce_datapath_<NAME> plus up to ~45
    # characters; past 255 it cannot write them.
    message(FATAL_ERROR "${_f}: NAME '${ARG_NAME}' is ${_len} characters, at most 64")
  endif()
  if(NOT ARG_SEAM STREQUAL "rx" AND NOT ARG_SEAM STREQUAL "tx")
    message(FATAL_ERROR "${_f}: SEAM '${ARG_SEAM}' is not rx or tx (the block replaced: roce_rx or roce_tx)")
  endif()
  if(NOT ARG_TOP MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${_f}: TOP '${ARG_TOP}' is not a Verilog module name")
  endif()
  get_property(_names GLOBAL PROPERTY ERNIC_USER_DATAPATHS)
  list(FIND _names "${ARG_NAME}" _dup)
  if(NOT _dup EQUAL -1)
    message(FATAL_ERROR "${_f}: NAME '${ARG_NAME}' is already a datapath (user:${ARG_NAME})")
  endif()
  set(_user)
  foreach(_s IN LISTS ARG_SOURCES)
    get_filename_component(_a "${_s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_LIST_DIR}")
    if(NOT EXISTS "${_a}")
      message(FATAL_ERROR "${_f}: SOURCES: no file ${_a}")
    endif()
    list(APPEND _user "${_a}")
  endforeach()
  if(NOT TARGET ernic_rtl)
    message(FATAL_ERROR "${_f}: call it from rtl/CMakeLists.txt or a file it includes (ERNIC_USER_RTL)")
  endif()
  get_target_property(_rtl ernic_rtl SOURCE_DIR)
  if(NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL _rtl)
    # verilate()'s custom commands belong to the folder of the target.
    message(FATAL_ERROR "${_f}: call it from rtl/CMakeLists.txt or a file it includes (ERNIC_USER_RTL), "
                        "not from ${CMAKE_CURRENT_SOURCE_DIR}")
  endif()

  # roce_datapath.sv and every block but the one replaced.
  set(_base datapath/roce_datapath.sv icrc/icrc.sv cdc/axis_async_fifo.sv cdc/sync_cell.sv)
  if(ARG_SEAM STREQUAL "rx")
    list(APPEND _base roce_tx/roce_tx.sv)
    set(_macro ROCE_RX_MODULE)
  else()
    list(APPEND _base roce_rx/roce_rx.sv)
    set(_macro ROCE_TX_MODULE)
  endif()
  set(_all)
  foreach(_s IN LISTS _base)
    list(APPEND _all "${_rtl}/${_s}")
  endforeach()
  list(APPEND _all ${_user})
  list(REMOVE_DUPLICATES _all)
  # Relative to rtl/, where verilate() runs Verilator (as ernic_rtl_top's:
  # the generated C++ quotes its top's path; relative, ccache hits from any
  # clone).
  set(_rel)
  foreach(_a IN LISTS _all)
    file(RELATIVE_PATH _r "${_rtl}" "${_a}")
    list(APPEND _rel "${_r}")
  endforeach()

  set(_prefix Vroce_datapath_${ARG_NAME})
  set(_trace)
  if(ERNIC_TRACE)
    set(_trace TRACE)
  endif()
  verilate(ernic_rtl ${_trace}
    PREFIX ${_prefix}
    TOP_MODULE roce_datapath
    SOURCES ${_rel}
    VERILATOR_ARGS ${ERNIC_RTL_VERILATOR_ARGS} ${ERNIC_USER_DATAPATH_CHECK_ARGS} -I${_rtl}/include
                   ${_rtl}/datapath/cc_top.vlt
                   -D${_macro}=${ARG_TOP} ${ARG_VERILATOR_ARGS})

  # The registration: make_user_datapath_<name> (template variables below).
  set(NAME ${ARG_NAME})
  set(SEAM ${ARG_SEAM})
  set(TOP ${ARG_TOP})
  set(PREFIX ${_prefix})
  set(_cpp ${CMAKE_BINARY_DIR}/user_datapaths/user_datapath_${ARG_NAME}.cpp)
  configure_file(${ERNIC_USER_DATAPATH_TEMPLATE} ${_cpp} @ONLY)
  set_property(GLOBAL APPEND PROPERTY ERNIC_USER_DATAPATHS ${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY ERNIC_USER_DATAPATH_SOURCES ${_cpp})
  message(STATUS "user datapath user:${ARG_NAME}: ${ARG_TOP} at the ${ARG_SEAM} seam (${_prefix})")
endfunction()

# ERNIC_USER_RTL's entries (rtl/CMakeLists.txt includes each): an absolute
# path to an existing file, else a FATAL_ERROR. A relative path is refused:
# include() would look for it in rtl/, and the configure step that the build
# re-runs starts in the build folder, not where the path was typed.
function(ernic_user_rtl_check path)
  if(NOT IS_ABSOLUTE "${path}")
    message(FATAL_ERROR "ERNIC_USER_RTL: '${path}' is a relative path; give an absolute one "
                        "(e.g. -DERNIC_USER_RTL=$PWD/${path})")
  endif()
  if(NOT EXISTS "${path}" OR IS_DIRECTORY "${path}")
    message(FATAL_ERROR "ERNIC_USER_RTL: no file ${path}")
  endif()
endfunction()

# Writes <build>/user_datapaths/user_datapaths.cpp (user_datapath_factories(),
# model/datapath/sc/datapath.h) and sets <out_var> to it and every
# registration file; model/CMakeLists.txt compiles them into ernic_model.
function(ernic_user_datapath_sources out_var)
  get_property(_names GLOBAL PROPERTY ERNIC_USER_DATAPATHS)
  get_property(_cpps GLOBAL PROPERTY ERNIC_USER_DATAPATH_SOURCES)
  set(_decl "")
  set(_items "")
  foreach(_n IN LISTS _names)
    string(APPEND _decl
      "std::unique_ptr<RoceDatapath> make_user_datapath_${_n}(sc_core::sc_module_name, const ClockDomain&,\n"
      "    const ClockDomain&, SimContext&, const std::string&, const DatapathConfig&);\n")
    string(APPEND _items "  v.emplace_back(\"user:${_n}\", &make_user_datapath_${_n});\n")
  endforeach()
  set(_list ${CMAKE_BINARY_DIR}/user_datapaths/user_datapaths.cpp)
  file(CONFIGURE OUTPUT ${_list} CONTENT
"// Generated by cmake/ErnicUserDatapath.cmake: one entry per ernic_user_datapath() call.
#include \"model/datapath/sc/datapath.h\"

namespace ernic {

${_decl}
std::vector<std::pair<std::string, DatapathFactory>> user_datapath_factories() {
  std::vector<std::pair<std::string, DatapathFactory>> v;
${_items}  return v;
}

}  // namespace ernic
")
  set(${out_var} ${_list} ${_cpps} PARENT_SCOPE)
endfunction()
