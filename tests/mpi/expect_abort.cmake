# cmake -DMPIEXEC=... -DNP=... -DPROGRAM=... -DEXPECT=<regex> -P expect_abort.cmake
# Runs PROGRAM under mpirun and passes when the job exits non-zero (it aborts), its output matches EXPECT and
# it contains no "meshloom-timeout-FAIL".
execute_process(
  COMMAND ${MPIEXEC} -np ${NP} --oversubscribe --allow-run-as-root ${PROGRAM}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 60)
set(all "${out}\n${err}")
message("${all}")
if(rc EQUAL 0)
  message(FATAL_ERROR "expected the job to abort with a non-zero exit status, got 0")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "expected output matching '${EXPECT}' (exit status ${rc})")
endif()
if(all MATCHES "meshloom-timeout-FAIL")
  message(FATAL_ERROR "a rank reported meshloom-timeout-FAIL (exit status ${rc})")
endif()
message("job aborted as expected (exit status ${rc})")
