# Turns the numbered migration files of one dialect into a C++ source file, so the binary carries
# its schema and needs no files beside it at run time.
#   embed_sql(OUT <file.cpp> NAME <cpp variable> FILES <a.sql> <b.sql> ...)
function(embed_sql)
  cmake_parse_arguments(ARG "" "OUT;NAME" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT "${ARG_OUT}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${ARG_OUT} -DNAME=${ARG_NAME} "-DFILES=${ARG_FILES}"
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedSqlScript.cmake"
    DEPENDS ${ARG_FILES} "${PROJECT_SOURCE_DIR}/cmake/EmbedSqlScript.cmake"
    COMMENT "Embedding migrations ${ARG_NAME}"
    VERBATIM)
endfunction()
