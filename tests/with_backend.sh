#!/bin/sh
# Runs a test command with IRIS_BACKEND taken from IRIS_TEST_BACKEND (default cpu), unless the test
# set IRIS_BACKEND itself.
: "${IRIS_BACKEND:=${IRIS_TEST_BACKEND:-cpu}}"
export IRIS_BACKEND
exec "$@"
