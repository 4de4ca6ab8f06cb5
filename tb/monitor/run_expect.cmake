# Runs ernic-sim on SCENARIO, expects exit code EXPECT_RC and the text EXPECT
# in the JSON report's model errors.
execute_process(COMMAND ${SIM} run ${SCENARIO} --quiet --json ${JSON}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\n${out}\n${err}")
endif()
file(READ ${JSON} report)
string(JSON errs GET ${report} model_errors)
string(FIND "${errs}" "${EXPECT}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "model errors lack '${EXPECT}':\n${errs}")
endif()
