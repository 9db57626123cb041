# What a newcomer trips on (issue 27), each through the real binary. Fixtures: fixtures/newcomer/.
set(n fixtures/newcomer)

# 1. A nil iris::Context argument, at the kernel's first launch, names the parameter and the line.
iris_cli_test(nil_context_argument EXIT 1 ARGS ${n}/nil_context.lua
  STDERR "^iris-lua\\[rank 0\\]: ${n}/nil_context.lua:10: put_ones[^\n]*: argument 3 'ctx' \\(iris::Context\\) expects the iris context \\(ctx\\), got nil \\(an undefined variable\\? check its spelling\\)\n")

# 5. The first use of a library kernel says so on a terminal (never on a pipe), once; `iris-lua --warm`
# (the subcommand warm) compiles the library kernels ahead. warm --list names every kernel file there is.
iris_cli_test(first_library_kernel_says_so MAX_SECONDS 180
  COMMAND sh ${n}/warm_notice.sh $<TARGET_FILE:iris-lua>
  STDOUT "^--- a pipe: no notice\nbarrier done\n--- a terminal, first use\r?\niris-lua: compiling ctx:device_barrier for [^,]+, once. cached in [^\n]+/b \\(iris-lua warm compiles every library kernel ahead\\)\r?\nbarrier done\r?\n--- a terminal, second use\r?\nbarrier done\r?\n--- iris-lua --warm device_barrier, then a terminal\niris-lua warm: compiling 1 library kernel file for the cpu backend[^\n]*\n  device_barrier +[0-9.]+ s\ndone in [0-9.]+ s[^\n]*\nbarrier done\r?\n$")
file(GLOB_RECURSE iris_kernel_files RELATIVE ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/*.hip)
list(TRANSFORM iris_kernel_files REPLACE "\\.hip$" "")
list(SORT iris_kernel_files)
string(REPLACE ";" "\n" iris_kernel_names "${iris_kernel_files}")
iris_cli_test(warm_lists_every_library_kernel ARGS warm --list STDOUT "^${iris_kernel_names}\n$")
iris_cli_test(warm_unknown_kernel EXIT 2 ARGS --warm ccl/all_reduse
  STDERR "^iris-lua warm: no library kernel is named 'ccl/all_reduse'. they are: bench_lead, ccl/all_gather, ccl/all_reduce,")

# 8. The test runner: only files that declare cases are tests (a module beside them is required, from
# any directory, and not reported); --exclude; before_each/after_each; a failing case shows what each
# rank printed; TAP beside JUnit.
set(r fixtures/runner)
iris_cli_test(runner_requires_modules_beside_the_test ARGS test ${r}/beside
  STDOUT "^PASS  ${r}/beside/uses_helper.lua: finds the module beside it ${ms}\n1 passed, 0 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_exclude ARGS test --exclude z_last --exclude "^${r}/tree/nested" ${r}/tree
  STDOUT "^PASS  ${r}/tree/a_first.lua: a ${ms}\n1 passed, 0 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_hooks EXIT 1 ARGS test ${r}/hooks.lua
  STDOUT "^PASS  ${r}/hooks.lua: first ${ms}\nFAIL  ${r}/hooks.lua: second fails ${ms}\n[^\n]+on purpose\n"
         "\nPASS  ${r}/hooks.lua: sees the order ${ms}\n2 passed, 1 failed, 0 skipped in [0-9.]+ s\n$")
iris_cli_test(runner_shows_each_ranks_output_of_a_failing_case RANKS 2 EXIT 1 ARGS test ${r}/output.lua
  STDOUT "^PASS  ${r}/output.lua: prints and passes ${ms}\nFAIL  ${r}/output.lua: prints and fails on the last rank ${ms}
    rank 1: ${r}/output.lua:9: the last rank fails
      stack traceback:
        \\[C\\]: in function 'error'
        ${r}/output.lua:9: in function <${r}/output.lua:6>
    output of rank 0:
      rank 0 says hello
      and writes
    output of rank 1:
      rank 1 says hello
      and writes
1 passed, 1 failed, 0 skipped in [0-9.]+ s
$")
iris_cli_test(runner_tap EXIT 1 COMMAND sh ${r}/report.sh $<TARGET_FILE:iris-lua> --tap ${CMAKE_CURRENT_BINARY_DIR}/runner.tap
  ${r}/mixed.lua
  STDOUT "\n--- [^\n]*runner.tap ---
TAP version 13
1..4
ok 1 - ${r}/mixed.lua: adds numbers
ok 2 - ${r}/mixed.lua: compares tables
not ok 3 - ${r}/mixed.lua: finds a wrong element
  ---
  message: \"rank 0: ${r}/mixed.lua:11: assert_equal failed on rank 0: third element: at \\[3\\]: got 4, expected 3 \\(1 of 3 elements differ\\)\"
  severity: fail
  data: .
[^\n]+
[^\n]+
[^\n]+
  \\.\\.\\.
ok 4 - ${r}/mixed.lua: needs a GPU # SKIP no GPU on this machine
$")

# 10. Small ones: a misspelt subcommand is named; every IRIS_* variable is read at start (a bad value
# ends the job before anything runs, a near miss of a name is pointed out).
iris_cli_test(misspelt_command EXIT 2 ARGS tset
  STDERR "^iris-lua: 'tset' is neither a script nor a command: did you mean 'iris-lua test'\\? \\(commands: [a-z, ]+\\)\nusage:")
iris_cli_test(bad_environment_value_at_start EXIT 2 ENVIRONMENT IRIS_CPU_THREADS=many ARGS -e "print('ran')"
  STDERR "^iris-lua: IRIS_CPU_THREADS must be a whole number from 1 to 4096, got 'many'\n$")
iris_cli_test(bad_environment_value_at_start_np2 RANKS 2 EXIT 2 ENVIRONMENT IRIS_HANG_TIMEOUT=soon ARGS -e "print('ran')"
  STDERR "iris-lua: IRIS_HANG_TIMEOUT must be a number of seconds \\(0: never\\), got 'soon'\n")
iris_cli_test(misspelt_environment_variable ENVIRONMENT IRIS_BAKEND=cpu ARGS -e "print('ran')" STDOUT "^ran\n$"
  STDERR "^iris-lua: warning: IRIS_BAKEND is not a variable iris-lua reads: did you mean IRIS_BACKEND\\?\n$")
# Scripts are LuaJIT (Lua 5.1): Lua 5.3's floor division is a syntax error that says so.
iris_cli_test(lua53_operator_is_named EXIT 2 ARGS -e "print(7 // 2)"
  STDERR "unexpected symbol near '/' \\(scripts are LuaJIT, Lua 5.1's syntax: no //, &, |, ~, << or >> operators. math.floor\\(a / b\\)")

# 6. help works on what a user holds: sections by name list their names; values print their entries.
iris_cli_test(help_on_values ARGS ${n}/help_values.lua
  STDOUT "=== help\\(\"iris\"\\)\niris: the module\n"
  "\n[0-9]+ names here \\(help\\(\"name\"\\) prints one\\):\n  iris.version, iris.rank, iris.world_size, iris.init,"
  "=== help\\(\"ctx\"\\)\nctx: the context\n" "\n[0-9]+ names here[^\n]*\n  ctx.rank, "
  "=== help\\(\"t\"\\)\nt: tensors\n" " t:shape, t.shape,"
  "=== help\\(ctx.ccl\\)\nctx.ccl: collectives\n"
  "\n10 names here[^\n]*\n  ctx.ccl.all_reduce, ctx.ccl.all_gather, ctx.ccl.reduce_scatter, ctx.ccl.all_to_all,\n"
  "  ctx.ccl.broadcast, ctx.ccl.reduce, ctx.ccl.gather, ctx.ccl.scatter, ctx.ccl.send, ctx.ccl.recv\n"
  "=== help\\(iris.trace\\)\niris.trace\n" "\n6 names here[^\n]*\n  iris.trace.start, iris.trace.mark,"
  "=== help\\(mod\\)\nmod and k: compiled modules and kernels\n"
  "\nthis module \\(${n}/help_values.lua:5\\): its kernels\n  put_ones\\(float\\* buf, int n, iris::Context ctx, int dst\\)\n  scale<T>\\(T\\* x, T factor, int n\\)\n"
  "\nthis kernel: put_ones \\(${n}/help_values.lua:5\\)\\(float\\* buf, int n, iris::Context ctx, int dst\\)\n$")

# 3. Benches give partial results: a long sweep says how long it will take, rows reach the table and the
# CSV as they are measured (stopped by Ctrl-C after 15 s, the rows so far are there), and a --plot that
# cannot be written (a PNG without a converter: no PATH) is refused before anything is measured.
iris_cli_test(bench_rows_as_measured MAX_SECONDS 60 CPU_ONLY "the cpu backend's sweep to 256 MiB is the long one"
  COMMAND sh ${n}/bench_stopped.sh $<TARGET_FILE:iris-lua> ${CMAKE_CURRENT_BINARY_DIR}/bench_stopped.csv
  STDOUT "^ccl_bench: [0-9]+ measurements up to 256 MiB will take about [0-9]+ s on the cpu backend. rows appear as they are measured \\(--max 1MiB, the default on cpu, takes seconds\\)\n"
         "\nall_reduce +size +variant +eager us[^\n]+\n +4 KiB +auto +[0-9.]+"
         "\nexit 124\n--- [^\n]+bench_stopped.csv\ncollective,dtype,ranks,backend,bytes,variant,calls,time_us,[^\n]+\nall_reduce,float32,1,cpu,4096,auto,")
set_tests_properties(cli/bench_rows_as_measured PROPERTIES FIXTURES_REQUIRED ccl_kernels)
iris_cli_test(bench_plot_refused_before_measuring EXIT 2 MAX_SECONDS 10 ENVIRONMENT PATH=/nonexistent
  ARGS ../../scripts/bench/ccl_bench.lua --plot ccl.png
  STDERR "^iris-lua\\[rank 0\\]: ccl_bench.lua: --plot ccl.png: a PNG needs rsvg-convert \\(Debian: librsvg2-bin\\) or ImageMagick. write .svg instead \\(--help lists the options\\)\n$")

# 10. Ranks failing (several at once, too): under Open MPI a failing rank exits with its code, which ends
# the job, instead of MPI_Abort, whose notice the launcher often fails to unpack (comm.cpp, Comm::abort).
iris_cli_test(all_ranks_fail_without_launcher_errors MAX_SECONDS 120
  COMMAND sh ${n}/all_ranks_fail.sh ${IRIS_MPIRUN} -np 4 $<TARGET_FILE:iris-lua>
  STDOUT "^run 1: exit 1, rank messages [1-4], launcher errors 0\nrun 2: exit 1, rank messages [1-4], launcher errors 0\nrun 3: exit 1, rank messages [1-4], launcher errors 0\nrun 4: exit 1, rank messages [1-4], launcher errors 0\nrun 5: exit 1, rank messages [1-4], launcher errors 0\n$")
