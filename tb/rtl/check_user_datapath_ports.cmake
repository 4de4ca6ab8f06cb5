# ctest rtl.user_datapath_port_errors: a user's block whose ports differ from
# the seam's must stop the build with Verilator's message naming the port
# (cmake/ErnicUserDatapath.cmake, ERNIC_USER_DATAPATH_CHECK_ARGS), not build
# with a warning (the RTL build's -Wno-fatal) and run with a truncated or
# floating port. Each case is roce_rx_alt with one port changed, Verilated
# (--lint-only) as ernic_user_datapath() does: roce_datapath.sv with
# -DROCE_RX_MODULE=<the block>.
# Usage: cmake -DVERILATOR=<verilator> -DRTL=<rtl/> "-DCHECK_ARGS=<list>"
#              -DWORK=<scratch dir> -P check_user_datapath_ports.cmake
if(NOT VERILATOR OR NOT RTL OR NOT CHECK_ARGS OR NOT WORK)
  message(FATAL_ERROR "check_user_datapath_ports.cmake: VERILATOR, RTL, CHECK_ARGS and WORK required")
endif()
file(MAKE_DIRECTORY ${WORK})
file(READ ${RTL}/examples/roce_rx_alt/roce_rx_alt.sv _alt)

# case | text in roce_rx_alt.sv | replacement | expected message (regex);
# <semi> stands for ';' (a list separator here)
set(_byp_last "  output logic          m_byp_tlast\n)")
set(_cases
  "narrow_desc|output logic [1023:0] m_desc,|output logic [1022:0] m_desc,|%Error-WIDTH: .*roce_datapath.sv:[0-9]+:[0-9]+: Output port connection 'm_desc' expects 1023 bits"
  "wide_tdata_in|input  logic [511:0]  s_axis_tdata,|input  logic [519:0]  s_axis_tdata,|%Error-WIDTH: .*Input port connection 's_axis_tdata' expects 520 bits"
  "extra_port|${_byp_last}|  output logic          m_byp_tlast,\n  input  logic          cfg_extra\n)|%Error-PINMISSING: .*Cell has missing pin: 'cfg_extra'"
  "missing_port|,\n${_byp_last}<semi>|\n)<semi>\n  logic m_byp_tlast<semi>|%Error: .*roce_datapath.sv:[0-9]+:[0-9]+: Pin is not an in/out/inout/param/interface: 'm_byp_tlast'")
string(ASCII 59 _semi)
set(_fail 0)
foreach(_c IN LISTS _cases)
  string(REPLACE "|" ";" _parts "${_c}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _from)
  list(GET _parts 2 _to)
  list(GET _parts 3 _want)
  string(REPLACE "<semi>" "${_semi}" _from "${_from}")
  string(REPLACE "<semi>" "${_semi}" _to "${_to}")
  string(FIND "${_alt}" "${_from}" _at)
  if(_at EQUAL -1)
    message(SEND_ERROR "${_name}: '${_from}' not in roce_rx_alt.sv (update this test)")
    set(_fail 1)
    continue()
  endif()
  string(REPLACE "${_from}" "${_to}" _sv "${_alt}")
  string(REPLACE "module roce_rx_alt" "module rx_${_name}" _sv "${_sv}")
  file(WRITE ${WORK}/rx_${_name}.sv "${_sv}")
  execute_process(COMMAND ${VERILATOR} --lint-only -Wno-fatal --timescale 1ps/1ps ${CHECK_ARGS} -I${RTL}/include
      -DROCE_RX_MODULE=rx_${_name} --top-module roce_datapath
      ${RTL}/datapath/roce_datapath.sv ${RTL}/icrc/icrc.sv ${RTL}/cdc/axis_async_fifo.sv ${RTL}/cdc/sync_cell.sv
      ${RTL}/roce_tx/roce_tx.sv ${WORK}/rx_${_name}.sv
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc EQUAL 0)
    message(SEND_ERROR "${_name}: Verilator exit 0 (built with a warning at most), an error wanted:\n${_out}")
    set(_fail 1)
  elseif(NOT _out MATCHES "${_want}")
    message(SEND_ERROR "${_name}: expected '${_want}' in:\n${_out}")
    set(_fail 1)
  else()
    message(STATUS "${_name}: ok")
  endif()
endforeach()
if(_fail)
  message(FATAL_ERROR "user datapath port checks failed")
endif()
