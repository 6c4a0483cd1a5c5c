/* nothing.c: a source that compiles to no code and no data. Stripped with
 * strip --strip-all (kernels/meson.build), its object has no symbol table
 * and nothing to lay out, as 109 members of glibc's libm.a have: it links
 * to an empty image (test empty_objects_link). */
