/* SPDX-License-Identifier: MIT */
/* <string.h> for a host kernel (docs/kernels.md): rig's own, for a kernel
 * compiled for no operating system (see <math.h> beside it). It declares
 * the functions of C99's <string.h> that the C library defines and that a
 * kernel may call from any number of threads at once; rig's linker finds
 * them in the process (SYM-1). Left out: strtok, which keeps its place in
 * the C library's own state (a launch's threads would share it), and
 * strerror and strcoll, whose answers hang on the process's locale. */
#ifndef RIG_KERNEL_STRING_H
#define RIG_KERNEL_STRING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *memcpy(void *restrict, const void *restrict, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
void *memchr(const void *, int, size_t);
size_t strlen(const char *);
size_t strnlen(const char *, size_t);
char *strcpy(char *restrict, const char *restrict);
char *strncpy(char *restrict, const char *restrict, size_t);
char *strcat(char *restrict, const char *restrict);
char *strncat(char *restrict, const char *restrict, size_t);
int strcmp(const char *, const char *);
int strncmp(const char *, const char *, size_t);
char *strchr(const char *, int);
char *strrchr(const char *, int);
size_t strspn(const char *, const char *);
size_t strcspn(const char *, const char *);
char *strpbrk(const char *, const char *);
char *strstr(const char *, const char *);

#ifdef __cplusplus
}
#endif

#endif
