# The web UI's build: bundle ui/ with npm + esbuild, then embed the bundle in
# a static library whose table src/web/ui/embedded_assets.h declares.
#
# gpumon_ui_add_assets_library(<target>
#     SOURCE_DIR <ui sources: package.json, package-lock.json, build.mjs, src/>
#     DIST_DIR <where build.mjs writes the bundle>
#     NODE <node> NPM <npm>)
# Adds build-time steps, in order:
#   1. cmake/ui_npm_ci.cmake: `npm ci` in SOURCE_DIR when node_modules is
#      missing or older than package-lock.json (under a file lock, so two
#      build trees never run it at once);
#   2. `node build.mjs --outdir DIST_DIR` into an emptied DIST_DIR, re-run
#      when any file under src/, index.html, build.mjs or the lock files
#      change (the glob is re-checked at every build: CONFIGURE_DEPENDS);
#   3. cmake/ui_embed.cmake: an assembler file that .incbin's every file of
#      DIST_DIR and a C++ file with the table (path, bytes, gzip variant,
#      ETag), both rewritten only when their text changes;
# and <target>, a static library of those two files. The caller enables
# the ASM language first (enable_language works at directory scope only).
#
# gpumon_ui_add_empty_assets_library(<target>): the same library with an
# empty table (GPUMON_UI=OFF, or no UI sources in the tree).

set(GPUMON_UI_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(gpumon_ui_add_assets_library target)
  cmake_parse_arguments(PARSE_ARGV 1 UI "" "SOURCE_DIR;DIST_DIR;NODE;NPM" "")
  file(GLOB_RECURSE ui_sources CONFIGURE_DEPENDS ${UI_SOURCE_DIR}/src/*)
  set(ui_inputs ${ui_sources} ${UI_SOURCE_DIR}/build.mjs ${UI_SOURCE_DIR}/package.json
      ${UI_SOURCE_DIR}/package-lock.json)
  foreach(optional index.html tsconfig.json)
    if(EXISTS ${UI_SOURCE_DIR}/${optional})
      list(APPEND ui_inputs ${UI_SOURCE_DIR}/${optional})
    endif()
  endforeach()

  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${target}.bundle.stamp)
  # The bundle goes to an emptied folder: content-hashed names change with
  # every edit, and stale ones must not be embedded.
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DNPM=${UI_NPM} -DUI_DIR=${UI_SOURCE_DIR}
            -P ${GPUMON_UI_CMAKE_DIR}/ui_npm_ci.cmake
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${UI_DIST_DIR}
    COMMAND ${CMAKE_COMMAND} -E echo "ui: bundling with esbuild into ${UI_DIST_DIR}"
    COMMAND ${UI_NODE} ${UI_SOURCE_DIR}/build.mjs --outdir ${UI_DIST_DIR}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${ui_inputs}
    WORKING_DIRECTORY ${UI_SOURCE_DIR}
    # Runs in ninja's console pool: npm's progress reaches the terminal.
    USES_TERMINAL
    COMMENT "Building the web UI (npm ci when needed, then ui/build.mjs)"
    VERBATIM)

  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${target})
  add_custom_command(
    OUTPUT ${gen}/ui_assets.S ${gen}/ui_assets_table.cc
    COMMAND ${CMAKE_COMMAND} -DDIST=${UI_DIST_DIR} -DOUT_ASM=${gen}/ui_assets.S
            -DOUT_CC=${gen}/ui_assets_table.cc -P ${GPUMON_UI_CMAKE_DIR}/ui_embed.cmake
    DEPENDS ${stamp} ${GPUMON_UI_CMAKE_DIR}/ui_embed.cmake
    COMMENT "Embedding the web UI bundle"
    VERBATIM)
  add_library(${target} STATIC ${gen}/ui_assets.S ${gen}/ui_assets_table.cc)
  # .incbin reads files the compiler's dependency scan does not see.
  set_source_files_properties(${gen}/ui_assets.S PROPERTIES OBJECT_DEPENDS ${stamp})
  target_link_libraries(${target} PUBLIC gpumon_web_ui)
endfunction()

function(gpumon_ui_add_empty_assets_library target)
  add_library(${target} STATIC ${PROJECT_SOURCE_DIR}/src/web/ui/no_embedded_assets.cc)
  target_link_libraries(${target} PUBLIC gpumon_web_ui)
endfunction()
