# The test runner, `iris-lua test` (issue 5, docs/lua-testing.md): what it prints, its exit codes,
# failures on one rank, timeouts at 1 and 2 ranks, --filter, --junit. Fixtures: fixtures/runner/.
set(ms "\\([0-9]+ ms\\)")
set(r fixtures/runner)

# --- cases, the summary line, exit codes ----------------------------------------------------------
iris_cli_test(runner_reports_each_case EXIT 1 ARGS test ${r}/mixed.lua
  STDOUT "^PASS  ${r}/mixed.lua: adds numbers ${ms}
PASS  ${r}/mixed.lua: compares tables ${ms}
FAIL  ${r}/mixed.lua: finds a wrong element ${ms}
    rank 0: ${r}/mixed.lua:11: assert_equal failed on rank 0: third element: at \\[3\\]: got 4, expected 3 \\(1 of 3 elements differ\\)
      stack traceback:
        ${r}/mixed.lua:11: in function <${r}/mixed.lua:10>
SKIP  ${r}/mixed.lua: needs a GPU \\(no GPU on this machine\\)
2 passed, 1 failed, 1 skipped in [0-9.]+ s
$")
iris_cli_test(runner_passes_with_exit_0 ARGS test ${r}/all_pass.lua STDOUT "\n2 passed, 0 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_skips_are_not_failures ARGS test ${r}/all_skip.lua
  STDOUT "^SKIP  ${r}/all_skip.lua: needs two GPUs \\(one GPU here\\)\n0 passed, 0 failed, 1 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_same_failure_on_every_rank RANKS 2 EXIT 1 ARGS test ${r}/mixed.lua
  STDOUT "FAIL  ${r}/mixed.lua: finds a wrong element ${ms}
    rank 0: ${r}/mixed.lua:11: assert_equal failed on rank 0: third element: at \\[3\\]: got 4, expected 3 \\(1 of 3 elements differ\\)
      stack traceback:
        ${r}/mixed.lua:11: in function <${r}/mixed.lua:10>
    rank 1: the same
SKIP" "\n2 passed, 1 failed, 1 skipped in [0-9.]+ s\n$")

# --- a failure on one rank --------------------------------------------------------------------------
iris_cli_test(runner_shows_the_failing_rank RANKS 2 EXIT 1 ARGS test ${r}/rank1_fails.lua
  STDOUT "^PASS  ${r}/rank1_fails.lua: passes everywhere ${ms}
FAIL  ${r}/rank1_fails.lua: fails on rank 1 ${ms}
    rank 1: ${r}/rank1_fails.lua:6: rank one disagrees
      stack traceback:
        \\[C\\]: in function 'error'
        ${r}/rank1_fails.lua:6: in function <${r}/rank1_fails.lua:4>
1 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
foreach(np 2 4)
  iris_cli_test(runner_rank_leaving_a_collective_np${np} RANKS ${np} EXIT 1 MAX_SECONDS 30
    ARGS test ${r}/rank1_skips_collective.lua
    STDOUT "FAIL  ${r}/rank1_skips_collective.lua: rank 1 fails before the barrier ${ms}
    rank 1: ${r}/rank1_skips_collective.lua:11: rank one gives up early
      stack traceback:
        \\[C\\]: in function 'error'
        ${r}/rank1_skips_collective.lua:11: in function <${r}/rank1_skips_collective.lua:10>
    rank 0: ${r}/rank1_skips_collective.lua:7: stopped in test barrier because rank 1 failed \\(see above\\) and left the case\n"
    "PASS  ${r}/rank1_skips_collective.lua: every rank meets at the barrier ${ms}\n1 passed, 1 failed, 0 skipped in [0-9.]+ s\n$")
endforeach()

# --- timeouts: the case is stopped where it is, the job goes on, nobody hangs ------------------------
iris_cli_test(runner_timeout_stops_a_loop EXIT 1 MAX_SECONDS 30 ARGS test --timeout 1 ${r}/forever.lua
  STDOUT "^FAIL  ${r}/forever.lua: loops forever ${ms}
    rank 0: ${r}/forever.lua:[4-6]: test timed out after 1 s
      stack traceback:
        ${r}/forever.lua:[4-6]: in function <${r}/forever.lua:2>
PASS  ${r}/forever.lua: runs after the timeout ${ms}
1 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_timeout_on_one_rank RANKS 2 EXIT 1 MAX_SECONDS 30 ARGS test --timeout 1 ${r}/rank1_forever.lua
  STDOUT "^FAIL  ${r}/rank1_forever.lua: rank 1 loops forever ${ms}
    rank 1: ${r}/rank1_forever.lua:4: test timed out after 1 s
      stack traceback:
        ${r}/rank1_forever.lua:4: in function <${r}/rank1_forever.lua:2>
PASS  ${r}/rank1_forever.lua: runs after the timeout ${ms}
1 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_timeout_while_others_wait_in_a_collective RANKS 2 EXIT 1 MAX_SECONDS 30
  ARGS test --timeout 1 ${r}/barrier_waits_for_loop.lua
  # Rank 0 either times out in the barrier too, or (on a loaded machine, when rank 1's timeout comes
  # first) sees rank 1 leave for the result exchange and says so: both name its line and end the case.
  STDOUT "rank 0: ${r}/barrier_waits_for_loop.lua:10: (test timed out after 1 s|stopped in test barrier because rank 1 failed \\(see [^)]+\\) and left the case)\n"
  "rank 1: ${r}/barrier_waits_for_loop.lua:8: test timed out after 1 s" "\n0 passed, 1 failed, 0 skipped in [0-9.]+ s\n$")
foreach(np 1 2)
  math(EXPR stuck_rank "${np} - 1")
  iris_cli_test(runner_timeout_stuck_in_c_ends_the_job_np${np} RANKS ${np} EXIT 1 MAX_SECONDS 30
    ARGS test --timeout 1 ${r}/stuck_in_c.lua
    STDERR "iris-lua\\[rank ${stuck_rank}\\]: ${r}/stuck_in_c.lua: sleeps in C: test timed out after 1 s and was still running 5 s later, where it cannot be interrupted \\(a C function, a device wait or JIT-compiled code\\); ending the job")
endforeach()

# --- files -----------------------------------------------------------------------------------------
iris_cli_test(runner_syntax_error_fails_the_file EXIT 1 ARGS test ${r}/syntax_error.lua ${r}/all_pass.lua
  STDOUT "^FAIL  ${r}/syntax_error.lua ${ms}
    rank 0: ${r}/syntax_error.lua:3: '\\)' expected \\(to close '\\(' at line 2\\) near '<eof>'
PASS  ${r}/all_pass.lua: one ${ms}
PASS  ${r}/all_pass.lua: keeps 50% of the values ${ms}
2 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_files_plain_skipped_and_broken EXIT 1
  ARGS test ${r}/plain_script.lua ${r}/sees_no_leak.lua ${r}/skip_file.lua ${r}/load_error.lua
  STDOUT "^PASS  ${r}/plain_script.lua ${ms}
PASS  ${r}/sees_no_leak.lua: does not see another file's globals ${ms}
SKIP  ${r}/skip_file.lua \\(this file needs something the machine does not have\\)
FAIL  ${r}/load_error.lua ${ms}
    rank 0: ${r}/load_error.lua:4: attempt to index local 'config' \\(a nil value\\)
      stack traceback:
        ${r}/load_error.lua:4: in main chunk
2 passed, 1 failed, 1 skipped in [0-9.]+ s
$")
iris_cli_test(runner_finds_files_in_directories ARGS test ${r}/tree
  STDOUT "^PASS  ${r}/tree/a_first.lua: a ${ms}
PASS  ${r}/tree/nested/m_middle.lua: m ${ms}
PASS  ${r}/tree/z_last.lua: z ${ms}
3 passed, 0 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_ranks_declaring_different_cases RANKS 2 EXIT 1 ARGS test ${r}/cases_differ.lua
  STDOUT "^FAIL  ${r}/cases_differ.lua ${ms}
    rank 1: ranks declared different test cases: rank 0 has 2 \\(everywhere, only on rank 0\\); rank 1 has 1 \\(everywhere\\) \\(every rank must make the same iris.test calls in the same order\\)
0 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_case_inside_a_case EXIT 1 ARGS test ${r}/misuse.lua
  STDOUT "rank 0: ${r}/misuse.lua:3: iris.test\\('inner'\\) inside the test case '${r}/misuse.lua: declares a case inside a case': declare cases at the top level of the file")

# --- options ---------------------------------------------------------------------------------------
# A filter is plain text or a Lua pattern ("50%" is no valid pattern; "^...: o" is one).
iris_cli_test(runner_filter EXIT 1
  ARGS test --filter wrong --filter 50% --filter "^${r}/tree/.*: [az]$" ${r}/mixed.lua ${r}/all_pass.lua ${r}/tree
  STDOUT "^FAIL  ${r}/mixed.lua: finds a wrong element ${ms}
    rank 0: [^\n]*
      stack traceback:
        [^\n]*
PASS  ${r}/all_pass.lua: keeps 50% of the values ${ms}
PASS  ${r}/tree/a_first.lua: a ${ms}
PASS  ${r}/tree/z_last.lua: z ${ms}
3 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_filter_selecting_nothing EXIT 1 ARGS test --filter=nothing-matches ${r}/all_pass.lua
  STDOUT "^no test case matches --filter nothing-matches \\(a run without cases fails\\)\n0 passed, 0 failed, 0 skipped in [0-9.]+ s\n$")
# A file that skips while loading is reported, but is no match of a filter that selects nothing.
iris_cli_test(runner_filter_selecting_nothing_but_a_skipped_file EXIT 1 ARGS test --filter nothing-matches ${r}/skip_file.lua
  STDOUT "\nno test case matches --filter nothing-matches \\(a run without cases fails\\)\n0 passed, 0 failed, 1 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_no_files EXIT 1 ARGS test ${r}/no_tests
  STDOUT "^no test case found \\(a run without cases fails\\)\n0 passed, 0 failed, 0 skipped in [0-9.]+ s\n$")

# --list, --fail-fast, --repeat (issue 13)
iris_cli_test(runner_list ARGS test --list --filter first ${r}/all_pass.lua ${r}/tree
  STDOUT "^${r}/tree/a_first.lua: a\n1 case\n$")
iris_cli_test(runner_list_runs_no_case ARGS test --list ${r}/mixed.lua
  STDOUT "^${r}/mixed.lua: adds numbers\n${r}/mixed.lua: compares tables\n${r}/mixed.lua: finds a wrong element\n${r}/mixed.lua: needs a GPU\n4 cases\n$")
iris_cli_test(runner_fail_fast EXIT 1 ARGS test --fail-fast ${r}/mixed.lua ${r}/all_pass.lua
  STDOUT "FAIL  ${r}/mixed.lua: finds a wrong element ${ms}\n[^\n]*\n[^\n]*\n[^\n]*\nstopped at the first failure \\(--fail-fast\\)\n2 passed, 1 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_fail_fast_np2 RANKS 2 EXIT 1 ARGS test --fail-fast ${r}/rank1_fails.lua ${r}/all_pass.lua
  STDOUT "FAIL  ${r}/rank1_fails.lua: fails on rank 1 ${ms}\n" "stopped at the first failure \\(--fail-fast\\)\n1 passed, 1 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_repeat ARGS test --repeat 3 --filter one ${r}/all_pass.lua
  STDOUT "^PASS  ${r}/all_pass.lua: one \\(run 1 of 3\\) ${ms}\nPASS  ${r}/all_pass.lua: one \\(run 2 of 3\\) ${ms}\nPASS  ${r}/all_pass.lua: one \\(run 3 of 3\\) ${ms}\n3 passed, 0 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_repeat_bad EXIT 2 ARGS test --repeat 0 ${r}/all_pass.lua STDERR "--repeat takes a whole number of runs, 1 or more, got '0'")
iris_cli_test(runner_junit EXIT 1 MAX_SECONDS 30
  COMMAND sh ${r}/report.sh $<TARGET_FILE:iris-lua> --junit ${CMAKE_CURRENT_BINARY_DIR}/runner_junit.xml ${r}/mixed.lua
          ${r}/load_error.lua
  STDOUT "\n2 passed, 2 failed, 1 skipped in [0-9.]+ s\n--- [^\n]*runner_junit.xml ---
<\\?xml version=\"1.0\" encoding=\"UTF-8\"\\?>
<testsuites name=\"iris-lua test\" tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"[0-9.]+\">
  <testsuite name=\"${r}/mixed.lua\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"[0-9.]+\">
    <testcase classname=\"${r}/mixed.lua\" name=\"adds numbers\" time=\"[0-9.]+\"/>
    <testcase classname=\"${r}/mixed.lua\" name=\"compares tables\" time=\"[0-9.]+\"/>
    <testcase classname=\"${r}/mixed.lua\" name=\"finds a wrong element\" time=\"[0-9.]+\">
      <failure message=\"rank 0: ${r}/mixed.lua:11: assert_equal failed on rank 0: third element: at \\[3\\]: got 4, expected 3 \\(1 of 3 elements differ\\)\" type=\"assertion\">rank 0: ${r}/mixed.lua:11: assert_equal failed on rank 0: third element: at \\[3\\]: got 4, expected 3 \\(1 of 3 elements differ\\)
  stack traceback:
    ${r}/mixed.lua:11: in function &lt.${r}/mixed.lua:10&gt.</failure>
    </testcase>
    <testcase classname=\"${r}/mixed.lua\" name=\"needs a GPU\" time=\"[0-9.]+\">
      <skipped message=\"no GPU on this machine\"/>
    </testcase>
  </testsuite>
  <testsuite name=\"${r}/load_error.lua\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"[0-9.]+\">
    <testcase classname=\"${r}/load_error.lua\" name=\"${r}/load_error.lua\" time=\"[0-9.]+\">
      <error message=\"rank 0: ${r}/load_error.lua:4: attempt to index local &apos.config&apos. \\(a nil value\\)\" type=\"error\">")

# --- usage errors: exit 2, nothing run -------------------------------------------------------------
iris_cli_test(runner_without_paths EXIT 2 ARGS test STDERR "^iris-lua test: name the test files or directories to run\nusage:")
iris_cli_test(runner_unknown_option EXIT 2 ARGS test --bogus ${r}/all_pass.lua STDERR "^iris-lua test: unknown option '--bogus'\n")
iris_cli_test(runner_missing_file EXIT 2 ARGS test ${r}/no_such_file.lua
  STDERR "^iris-lua test: no such file or directory: ${r}/no_such_file.lua\n")
iris_cli_test(runner_missing_file_np2 RANKS 2 EXIT 2 ARGS test ${r}/no_such_file.lua
  STDERR "iris-lua test: no such file or directory: ${r}/no_such_file.lua\n")
iris_cli_test(runner_bad_timeout EXIT 2 ARGS test --timeout soon ${r}/all_pass.lua
  STDERR "^iris-lua test: --timeout takes a number of seconds \\(0 for none\\), got 'soon'\n")
iris_cli_test(runner_unwritable_junit EXIT 2 ARGS test --junit /nonexistent/dir/out.xml ${r}/all_pass.lua
  STDERR "^iris-lua test: cannot write the JUnit file: /nonexistent/dir/out.xml: No such file or directory\n")
iris_cli_test(runner_help ARGS test --help STDOUT "^usage: iris-lua test .*--filter PATTERN.*--junit FILE.*--timeout SECONDS")

# --- iris.test in a script run directly ----------------------------------------------------------
iris_cli_test(test_cases_in_a_plain_run EXIT 1 ARGS ${r}/direct.lua
  STDOUT "^PASS  ${r}/direct.lua: first ${ms}
SKIP  ${r}/direct.lua: skipped \\(not today\\)
FAIL  ${r}/direct.lua: second fails ${ms}
    rank 0: ${r}/direct.lua:4: assert_allclose failed on rank 0: at \\[2\\]: got 2, expected 2.5 \\(1 of 2 elements differ; \\|difference\\| 0.5 > 2.5e-05 allowed by rtol 1e-05, atol 1e-08\\)
      stack traceback:
        ${r}/direct.lua:4: in function <${r}/direct.lua:4>
$"
  STDERR "^iris-lua\\[rank 0\\]: ${r}/direct.lua:4: test 'second fails' failed on rank 0 \\(reported above\\)\nstack traceback:")

# --- Ctrl-C stops the run --------------------------------------------------------------------------
iris_cli_test(runner_ctrl_c_stops_the_run EXIT 1 MAX_SECONDS 20 COMMAND sh ${r}/interrupt.sh $<TARGET_FILE:iris-lua>
  STDERR "^iris-lua\\[rank 0\\]: ${r}/forever.lua:[4-6]: interrupted! \\(in ${r}/forever.lua: loops forever\\)\n")
