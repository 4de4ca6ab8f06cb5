# Runs regs-gen into the build tree and compares with the checked-in files.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${GEN} ${YAML} ${OUT}/ernic_regs.def ${OUT}/REGISTERS.md ${OUT}/ernic_regs.vh
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "regs-gen failed on ${YAML}")
endif()
foreach(pair "ernic_regs.def;${DEF}" "REGISTERS.md;${MD}" "ernic_regs.vh;${VH}")
  list(GET pair 0 name)
  list(GET pair 1 checked_in)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${name} ${checked_in} RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "${checked_in} is stale: it differs from what ernic_regs.yaml generates "
                        "(run: cmake --build build --target regs-update)")
  endif()
endforeach()
