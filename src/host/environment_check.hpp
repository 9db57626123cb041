// Every IRIS_* variable read once at start (issue 27): a value its reader refuses ends the job before
// anything runs, instead of when a feature first reads it (IRIS_CPU_THREADS=many used to pass a job that
// never ran a kernel), and a name close to a variable's is pointed out.
#pragma once

#include <string>
#include <vector>

namespace iris::host {

// Reads every variable of core/env.def with the reader that uses it; throws that reader's
// Error(environment). Returns warnings for IRIS_* names that are no variable of iris-lua but close to
// one ("IRIS_BAKEND is not an iris-lua variable: did you mean IRIS_BACKEND?").
std::vector<std::string> check_environment();

// The candidate nearest `word` when a misspelling of it (at most 2 edits, fewer than `word` has
// characters), else "": "tset" -> "test", "IRIS_BAKEND" -> "IRIS_BACKEND".
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace iris::host
