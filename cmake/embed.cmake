# cmake -DIN=FILE -DOUT=FILE.c -DNAME=symbol -P embed.cmake: FILE as a C
# array NAME (NUL-terminated) and its length NAME_len, for a text the
# binary carries (the report's page template).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.new" "/* Generated from ${IN} by cmake/embed.cmake. */\n#include <stddef.h>\n"
  "const char ${NAME}[] = {\n${bytes}0x00 };\nconst size_t ${NAME}_len = ${len};\n")
file(RENAME "${OUT}.new" "${OUT}")
