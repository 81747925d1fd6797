# Manual pages and bash completion, generated from the tool's own --help texts
# (scripts/make-manpages with help2man, scripts/make-completion) after the tool
# is built, and installed by `make install`: solvent(1), solvent-COMMAND(1),
# and the completion under share/bash-completion/completions. Not in the
# sanitizer build, which is never installed and whose tool should not run
# during the build.
if(SOLVENT_SANITIZE)
  return()
endif()
find_program(SV_HELP2MAN help2man)
set(sv_manual_dir ${PROJECT_BINARY_DIR}/manual)
set(sv_tool_help_sources ${sv_tool_src} ${PROJECT_SOURCE_DIR}/scripts/make-completion)
add_custom_command(OUTPUT ${sv_manual_dir}/completion/solvent
  COMMAND ${CMAKE_COMMAND} -E make_directory ${sv_manual_dir}/completion
  COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/make-completion $<TARGET_FILE:solvent> ${sv_manual_dir}/completion/solvent
  DEPENDS solvent solvent_run ${sv_tool_help_sources}
  COMMENT "bash completion from solvent --help" VERBATIM)
set(sv_manual_outputs ${sv_manual_dir}/completion/solvent)
if(SV_HELP2MAN)
  add_custom_command(OUTPUT ${sv_manual_dir}/man1/solvent.1
    COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/make-manpages $<TARGET_FILE:solvent> ${sv_manual_dir}/man1
    DEPENDS solvent solvent_run ${sv_tool_src} ${PROJECT_SOURCE_DIR}/scripts/make-manpages
    COMMENT "manual pages from solvent --help (help2man)" VERBATIM)
  list(APPEND sv_manual_outputs ${sv_manual_dir}/man1/solvent.1)
  # every page the generator writes, whatever the commands are
  install(DIRECTORY ${sv_manual_dir}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR} FILES_MATCHING PATTERN "*.1")
else()
  message(STATUS "help2man not found: no manual pages (scripts/setup installs it)")
endif()
add_custom_target(solvent_manual ALL DEPENDS ${sv_manual_outputs})
install(FILES ${sv_manual_dir}/completion/solvent DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
