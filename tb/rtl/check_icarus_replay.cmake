# tb/rtl/check_icarus_replay.cmake: the RTL datapath under Icarus and under
# Verilator + SystemC with one recorded stimulus (issue 17; tools/icarus_compare.h).
#
#   cmake -DSIM=ernic-sim -DVVP=vvp -DWORK=dir -DMODE=outputs|bench -P check_icarus_replay.cmake
#
# MODE outputs (rtl.icarus.same_outputs): `ernic-sim icarus --bytes 16384`
# records node A's datapath in a 16 KiB WRITE stream (4 packets at PMTU
# 4096) and replays it; the three beat files (the run's own, Verilator's,
# Icarus's) must be byte-identical and hold what the stream must give: 6
# frames leave A to the CMAC (no FCS at this port): ConnectRequest and
# ReadyToUse, UD SEND on QP1 of 14 + 20 + 8 + 12 + DETH 8 + MAD 256 + ICRC 4
# = 322 bytes, 6 beats each (last keep 0x3); the first WRITE packet 14 + 20
# + 8 + 12 + RETH 16 + 4096 + 4 = 4170 bytes, 66 beats (last keep 0x3ff);
# three more of 4154 bytes, 65 beats: 273 beats taken in all. Then the
# negative control: one payload word of the stimulus changed, Icarus's
# output differs.
# MODE bench (rtl.icarus.bench_row): `ernic-sim bench` prints the replay
# rows in its speed table and speed.csv carries them (positive figures;
# never a speed threshold), or, without iverilog, says so in one line.
cmake_minimum_required(VERSION 3.16)
foreach(v SIM WORK MODE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_icarus_replay.cmake: -D${v}= missing")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

if(MODE STREQUAL "outputs")
  execute_process(COMMAND "${SIM}" icarus --bytes 16384 --out "${WORK}/ic"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ernic-sim icarus exited ${rc}")
  endif()
  if(NOT out MATCHES "outputs identical \\(and equal to the simulator's own run\\)")
    message(FATAL_ERROR "no 'outputs identical' line")
  endif()
  foreach(f icarus.beats stim.txt.beats)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/ic/verilator.beats" "${WORK}/ic/${f}"
                    RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      message(FATAL_ERROR "verilator.beats and ${f} differ")
    endif()
  endforeach()
  # Frames to the CMAC: beats taken (T with ready 1), their last beats.
  file(STRINGS "${WORK}/ic/icarus.beats" taken REGEX "^[0-9]+ T 1 ")
  file(STRINGS "${WORK}/ic/icarus.beats" lasts REGEX "^[0-9]+ T 1 [0-9a-f]+ 1 ")
  list(LENGTH lasts nframes)
  if(NOT nframes EQUAL 6)
    message(FATAL_ERROR "${nframes} frames left to the CMAC, want 6 (ConnectRequest, ReadyToUse, 4 WRITE packets)")
  endif()
  list(LENGTH taken nbeats)
  if(NOT nbeats EQUAL 273)
    message(FATAL_ERROR "${nbeats} beats taken by the CMAC, want 2 x 6 + 66 + 3 x 65 = 273")
  endif()
  foreach(keep 0000000000000003 00000000000003ff 03ffffffffffffff)
    if(NOT "${lasts}" MATCHES " T 1 ${keep} 1 ")
      message(FATAL_ERROR "no last beat with keep ${keep}")
    endif()
  endforeach()
  file(STRINGS "${WORK}/ic/icarus.beats" endl REGEX "^end ")
  file(STRINGS "${WORK}/ic/stim.txt" stim)
  list(LENGTH stim nlines)
  if(NOT endl MATCHES "^end ${nlines} ")
    message(FATAL_ERROR "the end line `${endl}` does not count the ${nlines} stimulus lines")
  endif()
  # Edges at the same picosecond in separate delta cycles (the recording
  # rarely has them): every CMAC line that follows a core line moves to
  # that line's time; both replays must still agree (Icarus puts such edges
  # 4 fs apart, SystemC in later delta cycles).
  if(VVP)
    file(STRINGS "${WORK}/ic/stim.txt" lines)
    set(out "")
    set(prev_dom 0)
    set(prev_t 0)
    set(moved 0)
    foreach(l IN LISTS lines)
      string(REGEX MATCH "^([123]) ([0-9]+) (.*)$" m "${l}")
      set(dom "${CMAKE_MATCH_1}")
      set(t "${CMAKE_MATCH_2}")
      set(rest "${CMAKE_MATCH_3}")
      if(dom STREQUAL "2" AND prev_dom STREQUAL "1")
        set(t "${prev_t}")
        math(EXPR moved "${moved} + 1")
      endif()
      string(APPEND out "${dom} ${t} ${rest}\n")
      set(prev_dom "${dom}")
      set(prev_t "${t}")
    endforeach()
    if(moved LESS 100)
      message(FATAL_ERROR "only ${moved} CMAC edges moved onto a core edge's time")
    endif()
    file(WRITE "${WORK}/same_t.txt" "${out}")
    execute_process(COMMAND "${SIM}" rtl-replay "${WORK}/same_t.txt" --out "${WORK}/same_t.verilator.beats"
                    RESULT_VARIABLE r1 OUTPUT_QUIET)
    execute_process(COMMAND "${VVP}" -n "${WORK}/ic/replay.vvp" "+stim=${WORK}/same_t.txt"
                            "+out=${WORK}/same_t.icarus.beats" RESULT_VARIABLE r2 OUTPUT_QUIET)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/same_t.verilator.beats"
                            "${WORK}/same_t.icarus.beats" RESULT_VARIABLE same)
    if(NOT r1 EQUAL 0 OR NOT r2 EQUAL 0 OR NOT same EQUAL 0)
      message(FATAL_ERROR "same-time edges: the replays differ (rtl-replay ${r1}, vvp ${r2}; ${WORK}/same_t.*)")
    endif()
    message(STATUS "same-time edges: ${moved} CMAC edges moved, outputs identical")
  endif()
  # Negative control: the first stimulus line that changes s_pay_tdata_w0
  # (input 17) gets another value; Icarus must then give other outputs.
  if(VVP)
    file(READ "${WORK}/ic/stim.txt" text)
    string(REGEX MATCH "\n[0-9]+ [0-9]+ [0-9]+[^\n]* 17 [0-9a-f]+" hit "${text}")
    if(NOT hit)
      message(FATAL_ERROR "no payload word in the stimulus")
    endif()
    string(REGEX REPLACE " 17 [0-9a-f]+$" " 17 123456789abcdef0" flipped "${hit}")
    string(REPLACE "${hit}" "${flipped}" text "${text}")
    file(WRITE "${WORK}/bad_stim.txt" "${text}")
    execute_process(COMMAND "${VVP}" -n "${WORK}/ic/replay.vvp" "+stim=${WORK}/bad_stim.txt" "+out=${WORK}/bad.beats"
                    RESULT_VARIABLE vrc OUTPUT_QUIET)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/ic/verilator.beats" "${WORK}/bad.beats"
                    RESULT_VARIABLE same)
    if(NOT vrc EQUAL 0 OR same EQUAL 0)
      message(FATAL_ERROR "a flipped payload word left Icarus's outputs unchanged (vvp ${vrc})")
    endif()
  endif()
elseif(MODE STREQUAL "bench")
  execute_process(COMMAND "${SIM}" bench --op write --sizes 16384 --bytes-per-size 65536 --no-latency
                          --speed-datapaths rtl --icarus-bytes 16384 --out "${WORK}/b"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ernic-sim bench exited ${rc}")
  endif()
  file(STRINGS "${WORK}/b/speed.csv" rows)
  if(NOT VVP)
    if(NOT out MATCHES "\n replay: no Icarus comparison: iverilog/vvp not found in PATH")
      message(FATAL_ERROR "without iverilog the table must say so in one line")
    endif()
    return()
  endif()
  string(REGEX MATCH "\n replay +verilator cyc/s +/floor +icarus cyc/s +/floor +verilator/icarus\n replay +([0-9.]+) +([0-9.e+-]+) +([0-9.]+) +([0-9.e+-]+) +([0-9.]+)\n" row "${out}")
  if(NOT row)
    message(FATAL_ERROR "no replay rows in the speed table")
  endif()
  foreach(i 1 3 5)
    if(NOT CMAKE_MATCH_${i} GREATER 0)
      message(FATAL_ERROR "replay row: column ${i} is `${CMAKE_MATCH_${i}}`, want a positive figure")
    endif()
  endforeach()
  if(NOT out MATCHES "\n \\(replay: node A's RTL datapath in a 16384-byte line-rate WRITE stream [^\n]*outputs identical; `ernic-sim icarus`\\)\n")
    message(FATAL_ERROR "no 'outputs identical' note under the replay row")
  endif()
  foreach(sim verilator icarus)
    list(FILTER rows EXCLUDE REGEX "^(write|idle),")
    set(found "")
    foreach(r IN LISTS rows)
      if(r MATCHES "^replay,${sim},([0-9.]+),([0-9.]+),([0-9.]+)$")
        set(found "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    if(NOT found GREATER 0)
      message(FATAL_ERROR "speed.csv: no row replay,${sim} with a positive speed")
    endif()
  endforeach()
else()
  message(FATAL_ERROR "MODE=${MODE}: outputs or bench")
endif()
