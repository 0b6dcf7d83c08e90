# meshloom_set_warnings(<target>): the project's warning set, applied target by target.
function(meshloom_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
      -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
    # GCC 12 warns -Wrestrict inside libstdc++ for `"literal" + std::string` once inlined at -O2 and above, a false
    # positive (GCC bug 105329, fixed in GCC 13) that filled the release build's log; every other warning stays on.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
    if(MESHLOOM_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
