# cmake -DNPM=<npm> -DUI_DIR=<dir> -P ui_npm_ci.cmake
#
# (also used for tests/dashboards, which has its own package-lock.json)
#
# Installs the UI's npm dependencies exactly as package-lock.json pins them
# (`npm ci`), but only when node_modules is missing or older than the lock
# file: npm ci deletes node_modules first, so running it on every build
# would cost a minute each time. npm writes node_modules/.package-lock.json
# on every install, so its time says when node_modules was last installed.
# A file lock keeps two build trees from installing at once.
file(LOCK ${UI_DIR}/.npm-ci.lock GUARD PROCESS TIMEOUT 900 RESULT_VARIABLE lock_result)
if(NOT lock_result EQUAL 0)
  message(FATAL_ERROR "ui: cannot lock ${UI_DIR}/.npm-ci.lock: ${lock_result}")
endif()
set(installed ${UI_DIR}/node_modules/.package-lock.json)
if(EXISTS ${installed} AND NOT ${UI_DIR}/package-lock.json IS_NEWER_THAN ${installed})
  return()
endif()
message(STATUS "ui: npm ci (node_modules missing or older than package-lock.json)")
execute_process(
  COMMAND ${NPM} ci --no-audit --no-fund
  WORKING_DIRECTORY ${UI_DIR}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "ui: `npm ci` failed in ${UI_DIR} (exit ${result}); "
                      "npm needs its registry or a warm cache (~/.npm)")
endif()
