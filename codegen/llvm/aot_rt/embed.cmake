# codegen/llvm/aot_rt/embed.cmake — turns the AOT runtime's C files into a
# header of two byte arrays that libncc writes into every generated glue
# (codegen/llvm/aot_lib.c): ncc_aot_rt_head (aot_rt.h, before the model's
# tables) and ncc_aot_rt_body (aot_rt.c, after them), each NUL-terminated.
#
#   cmake -DHEAD=aot_rt.h -DBODY=aot_rt.c -DOUT=aot_rt_embed.h -P embed.cmake
#
# The glue is one file compiled with only libc around it, so every local
# `#include "file"` at the start of a line is replaced by that file's text,
# recursively, each file once (a second include of it, e.g. aot_rt.h from
# aot_rt.c after the head, becomes a comment). Runs at build time in the
# compiler's build: plain CMake, no other tool.
cmake_minimum_required(VERSION 3.20)

# The text of FILE with its local includes inlined, into OUT_VAR. The files
# already inlined are the global property NCC_EMBED_SEEN.
function(ncc_embed_inline file out_var)
  get_filename_component(dir "${file}" DIRECTORY)
  file(READ "${file}" text)
  string(REGEX MATCHALL "\n#include \"[^\"]+\"" incs "${text}")
  foreach(inc IN LISTS incs)
    string(REGEX REPLACE "\n#include \"([^\"]+)\"" "\\1" rel "${inc}")
    get_filename_component(path "${dir}/${rel}" ABSOLUTE)
    get_property(seen GLOBAL PROPERTY NCC_EMBED_SEEN)
    if("${path}" IN_LIST seen)
      set(sub "\n/* #include \"${rel}\": its text is above */")
    else()
      if(NOT EXISTS "${path}")
        message(FATAL_ERROR "${file}: #include \"${rel}\": no such file")
      endif()
      set_property(GLOBAL APPEND PROPERTY NCC_EMBED_SEEN "${path}")
      ncc_embed_inline("${path}" inner)
      set(sub "\n/* ---- #include \"${rel}\", inlined at build time ---- */\n${inner}")
    endif()
    string(REPLACE "${inc}" "${sub}" text "${text}")
  endforeach()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# `static const unsigned char NAME[] = {...}` for TEXT, NUL-terminated.
function(ncc_embed_array name text out_var)
  string(HEX "${text}" hex)
  string(REPEAT "[0-9a-f]" 32 line)
  string(REGEX REPLACE "(${line})" "\\1\n" hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  set(${out_var} "static const unsigned char ${name}[] = {\n${hex}0x00};\n" PARENT_SCOPE)
endfunction()

foreach(v HEAD BODY OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed.cmake: -D${v}=... is missing")
  endif()
endforeach()
get_filename_component(HEAD "${HEAD}" ABSOLUTE)
get_filename_component(BODY "${BODY}" ABSOLUTE)
set_property(GLOBAL PROPERTY NCC_EMBED_SEEN "${HEAD}" "${BODY}")
ncc_embed_inline("${HEAD}" head)
ncc_embed_inline("${BODY}" body)
ncc_embed_array(ncc_aot_rt_head "${head}" head_c)
ncc_embed_array(ncc_aot_rt_body "${body}" body_c)
# one quoted argument: the C text is full of `;`, CMake's list separator
set(out "/* Generated at build time by codegen/llvm/aot_rt/embed.cmake from
 * codegen/llvm/aot_rt/aot_rt.h and aot_rt.c: do not edit. */
${head_c}${body_c}")
# written only when changed, so an unchanged runtime rebuilds nothing
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL out)
    return()
  endif()
endif()
file(WRITE "${OUT}.tmp" "${out}")
file(RENAME "${OUT}.tmp" "${OUT}")
