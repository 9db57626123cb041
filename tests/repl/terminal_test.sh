#!/bin/sh
# Types a REPL session into a real terminal (tmux) and checks what appears there, as a person would.
#
#   terminal_test.sh <session> <ranks> <iris-lua> <mpirun words...>
#
# Sessions (below): basics, interrupt, completion. One rank runs iris-lua on the terminal itself; more run it under
# mpirun, where rank 0 edits lines on mpirun's terminal. Every wait polls the screen (or a file) until
# a deadline, so a slow, loaded machine only makes the test slower. Exit 0: passed; 1: failed.
set -u
session=$1 ranks=$2 iris=$3
shift 3
mpirun_words="$*"

work=$(mktemp -d "${TMPDIR:-/tmp}/iris-repl-test.XXXXXX") || exit 1
mkdir -p "$work/home"
deadline=120  # seconds for any one thing to appear
term_session=repl
# Each start() gets a tmux server of its own (a private socket), so no ending server is ever reused.
starts=0
socket="iris-repl-test-$$-0"

tmux_() { tmux -L "$socket" -f /dev/null "$@"; }

cleanup() {
  n=0
  while [ "$n" -le "$starts" ]; do
    tmux -L "iris-repl-test-$$-$n" -f /dev/null kill-server 2>/dev/null
    n=$((n + 1))
  done
  rm -rf "$work"
}
trap cleanup EXIT

screen() { tmux_ capture-pane -p -J -S - -t "$term_session" 2>/dev/null; }

fail() {
  echo "FAILED ($session, $ranks rank(s)): $*"
  echo "--- screen ---"
  screen
  echo "--------------"
  exit 1
}

now() { date +%s; }

# wait_until <description> <command...>: polls the command until it succeeds.
wait_until() {
  what=$1
  shift
  end=$(($(now) + deadline))
  until "$@"; do
    [ "$(now)" -ge "$end" ] && fail "waited ${deadline} s for $what"
    # A session that ended cannot show it any more: say so now, not after the deadline.
    [ "$1" != ended ] && [ "$1" != no_leftovers ] && ended && fail "iris-lua ended (status $(cat "$work/exit")) while waiting for $what"
    sleep 0.2
  done
}

screen_has() { screen | grep -Eq -- "$1"; }
lines_matching() { screen | grep -Ec -- "$1"; }
at_least() { [ "$(lines_matching "$1")" -ge "$2" ]; }
last_line_is() { [ "$(screen | sed '/^[[:space:]]*$/d' | tail -n 1 | sed 's/[[:space:]]*$//')" = "$1" ]; }

# Each prompt shows once a command is done; prompts counts them so a wait never sees an old one.
prompts=0
wait_prompt() {
  prompts=$((prompts + 1))
  wait_until "prompt number $prompts" at_least '^> ' "$prompts"
  wait_until "an empty prompt line" last_line_is '>'
}
wait_continuation() { wait_until "the continuation prompt '>>'" last_line_is '>>'; }

type_line() {
  tmux_ send-keys -t "$term_session" -l -- "$1"
  tmux_ send-keys -t "$term_session" Enter
}
press() { tmux_ send-keys -t "$term_session" "$@"; }

# expect <text regex> [times]: every rank's line "[r] text" (just "text" with one rank) shows, `times`
# times in all (default once per rank).
expect() {
  times=${2:-1}
  r=0
  while [ "$r" -lt "$ranks" ]; do
    if [ "$ranks" -eq 1 ]; then prefix=''; else prefix="\\[$r\\] "; fi
    wait_until "'$1' from rank $r" at_least "^$prefix$1\$" "$times"
    r=$((r + 1))
  done
}

# start: iris-lua on a fresh terminal. A shell around it keeps the exit status in $work/exit (tmux
# itself sometimes misses its child's end); it ignores SIGINT, which Ctrl-C also sends it at 1 rank.
start() {
  prompts=0
  rm -f "$work/exit"
  mark="IRIS_REPL_TEST_MARK=$work"
  if [ "$ranks" -eq 1 ]; then
    launch="'$iris'"
  else
    launch="$mpirun_words -np $ranks '$iris'"
  fi
  command="trap '' INT; env HOME='$work/home' REPL_TEST_DIR='$work' $mark $launch; echo \$? > '$work/exit'"
  tmux_ kill-server 2>/dev/null
  starts=$((starts + 1))
  socket="iris-repl-test-$$-$starts"
  tmux_ start-server \; set-option -g remain-on-exit on \; \
    new-session -d -s "$term_session" -x 160 -y 50 "$command" 2>"$work/tmux.err" ||
    fail "tmux did not start: $(cat "$work/tmux.err")"
  wait_until "the banner" screen_has "^iris-lua .* on $ranks ranks?: "
  wait_prompt
}

ended() { [ -s "$work/exit" ]; }
no_leftovers() { ! grep -lsF "$mark" /proc/[0-9]*/environ >/dev/null 2>&1; }

# finish: the session ended by itself with exit status 0 and left no process behind.
finish() {
  wait_until "iris-lua to end" ended
  status=$(cat "$work/exit")
  [ "$status" = 0 ] || fail "iris-lua ended with status $status, expected 0"
  wait_until "every rank's process to be gone" no_leftovers
}

# Wait until every rank has created $work/<name>.<rank> (a chunk says it is running).
all_ranks_created() {
  r=0
  while [ "$r" -lt "$ranks" ]; do
    [ -e "$work/$1.$r" ] || return 1
    r=$((r + 1))
  done
}

mark_running() { echo "io.open(os.getenv('REPL_TEST_DIR') .. '/$1.' .. iris.rank(), 'w'):close()"; }

session_basics() {
  start
  type_line "1 + 1"
  expect "2"
  wait_prompt

  type_line "for i = 1, 2 do"
  wait_continuation
  type_line "  print('line ' .. i)"
  wait_continuation
  type_line "end"
  expect "line 2"
  wait_prompt

  type_line "error('boom')"
  expect "stdin:1: boom"
  expect "stack traceback:"
  wait_prompt
  type_line "'still ' .. 'here'"
  expect "still here"
  wait_prompt

  type_line ":ranks"
  r=0
  while [ "$r" -lt "$ranks" ]; do
    if [ "$ranks" -eq 1 ]; then prefix=''; else prefix="\\[$r\\] "; fi
    wait_until "rank $r in :ranks" screen_has "^${prefix}rank $r of $ranks: host [^,]+, pid [0-9]+, device "
    r=$((r + 1))
  done
  wait_prompt

  last=$((ranks - 1))
  type_line ":on $last print('only on ' .. iris.rank())"
  if [ "$ranks" -eq 1 ]; then
    wait_until "the :on output" screen_has "^only on 0\$"
  else
    wait_until "the :on output" screen_has "^\\[$last\\] only on $last\$"
  fi
  wait_prompt
  [ "$(lines_matching 'only on')" -eq 2 ] || fail ":on ran on more than rank $last"

  # Ctrl-C at the prompt drops the line.
  tmux_ send-keys -t "$term_session" -l -- "this is not lua"
  press C-c
  wait_prompt
  type_line "1 + 2"
  expect "3"
  wait_prompt
  screen_has "this is not lua.*(error|expected)" && fail "the dropped line ran"

  type_line ":quit"
  finish
  # (libedit encodes the spaces in the file: \040)
  grep -qF "'still" "$work/home/.iris_lua_history" || fail "the history file lacks a typed line"

  # A new session finds the history: Up twice recalls "1 + 2" (the last line was ":quit").
  start
  press Up
  press Up
  wait_until "the recalled line" screen_has '^> 1 \+ 2$'
  press Enter
  expect "3"
  wait_prompt
  press C-d
  finish
}

session_interrupt() {
  start
  # A loop typed at the prompt stops at Ctrl-C on every rank, and the session goes on.
  type_line "$(mark_running spinning) local x = 0 while true do x = x + 1 end"
  wait_until "every rank to spin" all_ranks_created spinning
  press C-c
  expect "interrupted!"
  wait_prompt
  type_line "'alive after ' .. 'Ctrl-C'"
  expect "alive after Ctrl-C"
  wait_prompt

  # The same inside a function the session defined.
  type_line "function spin() $(mark_running in_function) while true do end end"
  wait_prompt
  type_line "spin()"
  wait_until "every rank to spin in spin()" all_ranks_created in_function
  press C-c
  expect "interrupted!"
  expect "[[:space:]]+stdin:1: in function 'spin'"  # (tmux shows the tab as spaces)
  wait_prompt

  if [ "$ranks" -gt 1 ]; then
    # Rank 0 waits in a host collective the others never join: Ctrl-C frees it, and the REPL's own
    # messages still work afterwards.
    type_line ":on 0 $(mark_running lonely) require('ffi').C.iris_announce('lonely', 0, nil)"
    wait_until "rank 0 to wait" test -e "$work/lonely.0"
    press C-c
    wait_prompt
    type_line "'alive after ' .. 'a lonely collective'"
    expect "alive after a lonely collective"
    wait_prompt
    # The ranks' collectives are in step again: one that every rank joins completes.
    type_line "require('ffi').C.iris_announce('together', 0, nil) == 0 and 'together ' .. 'again'"
    expect "together again"
    wait_prompt
  fi

  press C-d
  finish
}

# Tab completes globals, fields and methods (issue 13), and lists the candidates on a second Tab;
# "=expr" prints the expression, as in luajit.
session_completion() {
  start
  type_line "ctx = iris.init()"
  wait_prompt
  tmux_ send-keys -t "$term_session" -l -- "ctx:zer"
  press Tab
  wait_until "the method completed" screen_has '^> ctx:zeros$'
  tmux_ send-keys -t "$term_session" -l -- "(3)"
  press Enter
  expect "tensor\\(\\[0\\., 0\\., 0\\.\\]\\)"
  wait_prompt
  tmux_ send-keys -t "$term_session" -l -- "iris.assert_"
  press Tab
  press Tab
  wait_until "the candidates listed" screen_has '^iris\.assert_allclose +iris\.assert_equal$'
  prompts=$(lines_matching '^> ')  # the line is shown again under the list
  press C-c
  wait_prompt
  type_line "=6 * 7"
  expect "42"
  wait_prompt
  type_line ":quit"
  finish
}

case $session in
  basics) session_basics ;;
  interrupt) session_interrupt ;;
  completion) session_completion ;;
  *) echo "unknown session '$session'"; exit 2 ;;
esac
echo "passed: $session at $ranks rank(s)"
