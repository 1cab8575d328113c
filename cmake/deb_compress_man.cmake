# Run by CPack (CPACK_PRE_BUILD_SCRIPTS) on its staging tree, before the .deb
# is made: Debian policy wants man pages gzipped with -9, and -n leaves the
# name and time out so the package is reproducible.
file(GLOB_RECURSE pages "${CPACK_TEMPORARY_DIRECTORY}/*/share/man/man[1-9]/*.[1-9]")
foreach(page IN LISTS pages)
  execute_process(COMMAND gzip -9nf "${page}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed (${rc})")
  endif()
endforeach()
